-- best configuration exported by the ClassyTune harness: session fig6-sqlite-readwrite-classytune_paper-s0, trial 53 of 100
-- units: cache_size [KiB], page_size [B], mmap_size [MiB], wal_autocheckpoint [pages]
PRAGMA page_size=8192;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-30640;
PRAGMA cache_spill=OFF;
PRAGMA mmap_size=16777216;
PRAGMA temp_store=FILE;
PRAGMA wal_autocheckpoint=2942;
PRAGMA secure_delete=OFF;
