-- best configuration exported by the ClassyTune harness: session fig6-sqlite-readwrite-bestconfig-s1, trial 97 of 100
-- units: cache_size [KiB], page_size [B], mmap_size [MiB], wal_autocheckpoint [pages]
PRAGMA page_size=2048;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-91882;
PRAGMA cache_spill=OFF;
PRAGMA mmap_size=1048576;
PRAGMA temp_store=FILE;
PRAGMA wal_autocheckpoint=77;
PRAGMA secure_delete=OFF;
