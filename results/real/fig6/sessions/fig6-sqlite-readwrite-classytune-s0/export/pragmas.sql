-- best configuration exported by the ClassyTune harness: session fig6-sqlite-readwrite-classytune-s0, trial 83 of 100
-- units: cache_size [KiB], page_size [B], mmap_size [MiB], wal_autocheckpoint [pages]
PRAGMA page_size=8192;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-4246;
PRAGMA cache_spill=OFF;
PRAGMA mmap_size=67108864;
PRAGMA temp_store=DEFAULT;
PRAGMA wal_autocheckpoint=5137;
PRAGMA secure_delete=ON;
