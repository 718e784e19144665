"""Names of the MLflow tags, params and metrics the harness writes (and the figures read)."""

# Tags on session (parent) runs
TAG_KIND = "harness.kind"  # "session" or "test"
TAG_SYSTEM = "harness.system"
TAG_SYSTEM_KIND = "harness.system_kind"  # real | surrogate | synthetic | remote
TAG_WORKLOAD = "harness.workload"
TAG_TUNER = "harness.tuner"
TAG_SEED = "harness.seed"
TAG_GIT = "harness.git_revision"
#: ``harness.lib.<package>``: the version of a library that changes results (xgboost, ...)
PREFIX_LIBRARY = "harness.lib."
#: ``resolved.tuner.<k>``/``resolved.workload.<k>``: settings as the objects resolved them
PREFIX_RESOLVED = "resolved."
TAG_SESSION_ID = "harness.session_id"
TAG_SESSION_DIR = "harness.session_dir"
TAG_OBJECTIVE = "harness.objective"
TAG_DIRECTION = "harness.direction"
TAG_SESSION_STATUS = "harness.session_status"  # FINISHED | ABORTED | INTERRUPTED
TAG_PARENT = "mlflow.parentRunId"
TAG_NOTE = "mlflow.note.content"  # the run's description in the UI (markdown)
TAG_BEST_RUN = "harness.best_run_id"  # the child run of the best test
TAG_BEST_TRIAL = "harness.best_trial"

# Tags on test (child) runs
TAG_TRIAL = "harness.trial"
TAG_STATUS = "harness.status"
TAG_IS_DEFAULT = "harness.is_default"
TAG_MESSAGE = "harness.message"
TAG_IS_BEST = "harness.is_best"  # "true" on the session's best test (moves on resume)

# Metrics
METRIC_OBJECTIVE = "objective"  # the raw objective value of a test
METRIC_SCORE = "score"  # larger-is-better score of a test
METRIC_DURATION = "test_duration_s"
METRIC_BEST_SO_FAR = "best_so_far"  # raw objective value of the best test, by step (= trial)
METRIC_TUNER_SECONDS = "tuner_seconds"  # tuner computation time, by step (= ask/tell call)
METRIC_TUNER_TOTAL = "tuner_seconds_total"
METRIC_DEFAULT = "default_value"
METRIC_BEST = "best_value"
METRIC_IMPROVEMENT = "improvement"  # a fraction (0.25 = +25 %), vs the first default test
METRIC_IMPROVEMENT_NEAREST = "improvement_vs_nearest_default"
METRIC_IMPROVEMENT_CONFIRMED = "improvement_confirmed"
# The same two in percent (+25.0 for a fraction of 0.25): the columns the runs view shows.
METRIC_IMPROVEMENT_PCT = "improvement_pct"
METRIC_IMPROVEMENT_CONFIRMED_PCT = "improvement_confirmed_pct"
METRIC_TESTS = "tests"
METRIC_FAILED_TESTS = "failed_tests"
#: Tests stopped early (a bound, not a measurement: harness.session.early_stop).
METRIC_STOPPED_EARLY_TESTS = "stopped_early_tests"
#: Screening runs, at a fraction of a full test (harness.session.screening).
METRIC_SCREENING_TESTS = "screening_tests"
#: A test's fraction of a full test (a child run's metric; 1 for a full test).
METRIC_FIDELITY = "fidelity"
#: A stopped test's censored bound on the objective's metric (a child run's metric).
METRIC_CENSORED_BOUND = "censored_bound"

# Prefixes
PREFIX_METRIC = "result."  # every workload metric of a test, e.g. result.tps
PREFIX_CONFIG = "config."  # knob values: params of a test run, columns of the samples table
# The best configuration on the session run. Tags, not params: params are write-once and the
# best changes when a session is resumed.
PREFIX_BEST = "harness.best."  # e.g. harness.best.io_threads = 8

ARTIFACT_SAMPLES = "samples"
ARTIFACT_TUNER = "tuner"
ARTIFACT_LOGS = "logs"
ARTIFACT_BEST_CONFIG = "best_config.json"  # {knob: value} of the best test, rewritten at the end
