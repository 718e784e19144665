-- best configuration exported by the ClassyTune harness: session fig6-sqlite-readwrite-classytune_paper-s1, trial 73 of 100
-- units: cache_size [KiB], page_size [B], mmap_size [MiB], wal_autocheckpoint [pages]
PRAGMA page_size=4096;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA journal_mode=MEMORY;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-643;
PRAGMA cache_spill=ON;
PRAGMA mmap_size=67108864;
PRAGMA temp_store=DEFAULT;
PRAGMA wal_autocheckpoint=2363;
PRAGMA secure_delete=ON;
