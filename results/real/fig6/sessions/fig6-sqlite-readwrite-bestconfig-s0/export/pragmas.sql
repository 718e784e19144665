-- best configuration exported by the ClassyTune harness: session fig6-sqlite-readwrite-bestconfig-s0, trial 43 of 100
-- units: cache_size [KiB], page_size [B], mmap_size [MiB], wal_autocheckpoint [pages]
PRAGMA page_size=8192;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA journal_mode=MEMORY;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-376830;
PRAGMA cache_spill=ON;
PRAGMA mmap_size=268435456;
PRAGMA temp_store=MEMORY;
PRAGMA wal_autocheckpoint=11530;
PRAGMA secure_delete=OFF;
