-- best configuration exported by the ClassyTune harness: session fig6-sqlite-readwrite-gpbo_paper-s1, trial 29 of 100
-- units: cache_size [KiB], page_size [B], mmap_size [MiB], wal_autocheckpoint [pages]
PRAGMA page_size=1024;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA journal_mode=MEMORY;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-403;
PRAGMA cache_spill=OFF;
PRAGMA mmap_size=67108864;
PRAGMA temp_store=DEFAULT;
PRAGMA wal_autocheckpoint=27;
PRAGMA secure_delete=FAST;
