-- best configuration exported by the ClassyTune harness: session fig6-sqlite-readwrite-gpbo_paper-s0, trial 35 of 100
-- units: cache_size [KiB], page_size [B], mmap_size [MiB], wal_autocheckpoint [pages]
PRAGMA page_size=8192;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-79627;
PRAGMA cache_spill=ON;
PRAGMA mmap_size=1073741824;
PRAGMA temp_store=DEFAULT;
PRAGMA wal_autocheckpoint=8877;
PRAGMA secure_delete=FAST;
