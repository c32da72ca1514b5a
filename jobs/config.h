/*
 * config.h: the configuration file (JSON), validated before anything runs.
 *
 * The command line chooses the file (--config FILE, else
 * <home>/profreg.json when it exists; no file means the built-in
 * defaults) and passes its path. Every unknown key and every value of
 * the wrong type or range is an error that names its JSON path
 * ("config 'p.json': limits.max_depth: expected a positive integer").
 * Command-line flags override the file.
 *
 *   {
 *     "limits":   {"max_input_bytes": N, "max_decompressed_bytes": N,
 *                  "max_samples": N, "max_depth": N, "max_string_length": N},
 *     "analysis": {"window_days": N, "min_captures": N, "rel_margin": X,
 *                  "abs_margin_pp": X, "min_share_pp": X, "fdr": X, "mw_alpha": X,
 *                  "max_looks": N, "spend_rho": X, "confirm_looks": N,
 *                  "confirm_critical": BOOL, "cost_tests": BOOL,
 *                  "severity": {"q_max": X, "critical_pp": X, "critical_rel": X,
 *                               "critical_rel_pp": X, "high_pp": X, "medium_pp": X}},
 *     "retention": {"forensic_days": N (0: evidence is kept forever),
 *                   "hot_days": N, "summary_days": N, "summary_top": N,
 *                   "budget_bytes": N, "budget_rows": N, "batch": N,
 *                   "after_nightly": BOOL},
 *     "paging":   {"min_severity": "high", "max_attempts": N,
 *                  "connect_timeout_ms": N, "timeout_ms": N,
 *                  "backoff_ms": N, "max_backoff_ms": N, "alert_hours": N,
 *                  "targets": {"NAME": {"type": "pagerduty"|"alertmanager"|"webhook",
 *                                       "url": "URL", "secret_env": "VAR",
 *                                       "secret_file": "PATH"}},
 *                  "default": ["TARGET", ...],
 *                  "teams": {"TEAM": ["TARGET", ...]}},
 *     "metrics":  {"pushgateway": "URL", "instance": "NAME"},
 *     "reports":  {"dir": "PATH", "base_url": "URL", "compare_url": "URL"},
 *     "collect":  {"max_concurrent": N, "max_concurrent_fleet": N, "cooldown_s": N,
 *                  "budget_s": N, "retries": N, "retry_s": N},
 *     "snapshot": {"time_budget_ms": N, "size_budget_bytes": N, "sample_ms": N,
 *                  "top_threads": N, "top_processes": N, "file_max_bytes": N,
 *                  "kmsg_bytes": N, "max_tasks": N, "nice": N, "cooldown_s": N,
 *                  "services": {"NAME": {"processes": ["COMM", ...],
 *                                        "cgroup": "/system.slice/x.service",
 *                                        "full_cmdline": BOOL}}},
 *     "blobs":    {"store": "local"|"s3", "endpoint": "URL", "bucket": "B",
 *                  "prefix": "P/", "region": "R", "addressing": "path"|"virtual",
 *                  "access_key_id_env": "VAR", "access_key_id_file": "PATH",
 *                  "secret_access_key_env": "VAR", "secret_access_key_file": "PATH",
 *                  "session_token_env": "VAR", "session_token_file": "PATH",
 *                  "ca_file": "PATH", "connect_timeout_ms": N, "timeout_ms": N},
 *     "services": {"NAME": {"team": "T", "types": ["cpu", ...],
 *                           "source": {"dir": "PATH"}, "repo": "PATH",
 *                           "sources": [SOURCE, ...], "max_concurrent": N,
 *                           "page": ["TARGET", ...],
 *                           "retention": {"hot_days": N, "summary_days": N,
 *                                         "summary_top": N}}}
 *   }
 *
 * A SOURCE is one of (every key but "type" optional unless said):
 *
 *   {"type": "dir", "dir": "PATH" (required)}
 *   {"type": "pprof_http", "targets": ["host:port", ...], "file_sd": ["PATH", ...],
 *    "scheme": "http"|"https", "seconds": N (CPU profile length, 10),
 *    "release_label": "release", "commit_label": "commit", "host_label": "host", COMMON}
 *   {"type": "pyroscope", "url": "URL" (required), "tenant": "ID",
 *    "selector": "{service_name=\"NAME\"}", "profile_types": {"cpu": "ID", ...},
 *    "version_label": "service_git_ref", "slot_s": N, COMMON}
 *   {"type": "parca", "url": "URL" (required), "selector": "{...}",
 *    "profile_types": {"cpu": "parca_agent:samples:count:cpu:nanoseconds:delta", ...},
 *    "slot_s": N, COMMON}
 *
 *   {"type": "s3_prefix", "endpoint": "URL", "bucket": "B", "region": "R" (required),
 *    "prefix": "P/", "addressing": "path"|"virtual", "access_key_id_env": "VAR",
 *    "access_key_id_file": "PATH", "secret_access_key_env": "VAR",
 *    "secret_access_key_file": "PATH", "session_token_env": "VAR",
 *    "session_token_file": "PATH", "ca_file", "connect_timeout_ms", "timeout_ms"}
 *
 * COMMON: "types": [profile types] (the service's "types" by default),
 * "ca_file", "auth": "bearer"|"basic", "username" (basic), "secret_env" or
 * "secret_file" (the token or password), "connect_timeout_ms", "timeout_ms".
 * A source with a secret must use https, or plain http to a loopback
 * host, as paging targets do. An s3_prefix source (object-store drops:
 * profiles and their JSON sidecars under a prefix, as in a drop folder)
 * takes the keys of "blobs" and its checks (https, or plain http to this
 * machine only); its credentials default to AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and (when set) AWS_SESSION_TOKEN; the sidecars
 * say each capture's type, so it has no "types".
 *
 * Who is paged for a service: its own "page" list, else its team's list
 * under paging.teams, else paging.default; an empty list pages no one.
 * Its team is services.NAME.team here, else the one the database holds
 * for it (`service add --team`).
 * Every target a list names must exist under paging.targets.
 *
 * Which wins: the database registers services and holds their opt-in
 * (`profreg service add/enable/disable`); the file holds where their
 * profiles come from. A service in the file that is not registered, or
 * not enabled, is reported and skipped, never enabled behind anyone's
 * back; the file has no "enabled" key, so the two cannot disagree.
 */
#ifndef PR_CONFIG_H
#define PR_CONFIG_H

#include "baselines/analysis.h"
#include "pipeline/profile.h"

/* Per-tier ages and size of the retention job; -1 in a service: inherit. */
typedef struct config_tiers {
	int64_t hot_us;          /* blob and every row kept this long (7 days) */
	int64_t summary_us;      /* then summary rows only, up to this age (90 days) */
	int64_t summary_top;     /* rows kept per summary capture (200; 0: all) */
} config_tiers;

typedef struct config_retention {
	config_tiers tiers;
	uint64_t budget_bytes;   /* blob bytes allowed; 0: no budget */
	uint64_t budget_rows;    /* per-function rows allowed; 0: no budget */
	uint32_t batch;          /* captures per transaction (200) */
	bool after_nightly;      /* nightly runs retention at its end */
} config_retention;

typedef enum config_target_kind {
	CONFIG_TARGET_PAGERDUTY = 0,
	CONFIG_TARGET_ALERTMANAGER,
	CONFIG_TARGET_WEBHOOK,
} config_target_kind;

/*
 * Where pages go. The secret (PagerDuty routing key, or the bearer token
 * of Alertmanager or a webhook) is named here, never written here: it is
 * read from the environment variable or the owner-only file at send time.
 */
typedef struct config_target {
	char *name;              /* its key under paging.targets */
	config_target_kind kind;
	char *url;               /* PagerDuty/Alertmanager: base URL; webhook: the URL */
	char *secret_env;        /* NULL when not set */
	char *secret_file;       /* NULL when not set */
} config_target;

typedef struct config_route {
	char *team;
	char **targets;
	size_t ntargets;
} config_route;

typedef struct config_paging {
	stats_severity min_severity;  /* findings below it never page (high) */
	uint32_t max_attempts;        /* per page per run (5) */
	uint32_t connect_timeout_ms;  /* (3000) */
	uint32_t timeout_ms;          /* whole request (10000) */
	uint32_t backoff_ms;          /* first retry delay, doubled each time (500) */
	uint32_t max_backoff_ms;      /* (30000) */
	uint32_t alert_hours;         /* Alertmanager endsAt = each send + this; every
				       * flush re-sends the open ones (48) */
	config_target *targets;
	size_t ntargets;
	char **default_targets;
	size_t ndefault;
	config_route *teams;
	size_t nteams;
} config_paging;

typedef struct config_metrics {
	char *pushgateway;       /* base URL, NULL: no push */
	char *instance;          /* grouping label, NULL: the host name */
} config_metrics;

typedef struct config_reports {
	char *dir;               /* NULL: <home>/reports */
	char *base_url;          /* where reports are published, for links; NULL */
	char *compare_url;       /* serve's comparison page, which findings link to; NULL */
	int keep_days;           /* run reports older than this are deleted by retention,
				  * unless a finding they list is open; 0: kept for good */
} config_reports;

typedef enum config_source_kind {
	CONFIG_SRC_DIR = 0,
	CONFIG_SRC_PPROF_HTTP,
	CONFIG_SRC_PYROSCOPE,
	CONFIG_SRC_PARCA,
	CONFIG_SRC_S3_PREFIX,
} config_source_kind;

/* One profile a source pulls: a profreg type and what the source calls it. */
typedef struct config_profile {
	char *type;        /* cpu, heap, alloc, goroutine, wall */
	char *id;          /* pprof_http: profile, heap, allocs, goroutine;
			    * pyroscope: a profile type id; parca: a profile type */
} config_profile;

/*
 * An S3 bucket as a configuration block names it ("blobs", an s3_prefix
 * source): where it is and where its credentials are read from.
 */
typedef struct config_s3 {
	char *endpoint, *bucket;
	char *prefix;                 /* NULL: none */
	char *region;
	bool virtual_host;            /* "addressing": "virtual" */
	char *access_key_id_env, *access_key_id_file;
	char *secret_access_key_env, *secret_access_key_file;
	char *session_token_env, *session_token_file;
} config_s3;

typedef struct config_source {
	config_source_kind kind;
	char *label;           /* "services.NAME.sources[2]" for messages */
	char *dir;             /* dir */
	char **targets;        /* pprof_http: static "host:port" list */
	size_t ntargets;
	char **file_sd;        /* pprof_http: Prometheus file_sd files */
	size_t nfile_sd;
	char *scheme;          /* pprof_http: "http" (default) or "https" */
	uint32_t seconds;      /* pprof_http: CPU profile length (10) */
	char *release_label, *commit_label, *host_label;   /* pprof_http target labels */
	char *url;             /* pyroscope, parca: base URL */
	char *tenant;          /* pyroscope: X-Scope-OrgID */
	char *selector;        /* pyroscope, parca: label selector */
	char *version_label;   /* pyroscope: label naming the release (service_git_ref) */
	config_profile *profiles;  /* what to pull, one per profreg type */
	size_t nprofiles;
	int64_t slot_us;       /* one capture per slot (1 h) */
	char *ca_file;
	bool basic;            /* auth "basic" (else bearer when a secret is set) */
	char *username;
	char *secret_env, *secret_file;
	uint32_t connect_timeout_ms;  /* (5000) */
	uint32_t timeout_ms;          /* the request; pprof_http CPU adds its seconds (30000) */
	config_s3 s3;          /* s3_prefix: where the drops are, as in config_blobs */
} config_source;

/* Limits of collection from profile sources (sources other than dir). */
typedef struct config_collect {
	uint32_t max_concurrent;       /* profile requests in flight per service (2) */
	uint32_t max_concurrent_fleet; /* in all (8) */
	int64_t cooldown_us;           /* between two CPU profiles of one host (300 s) */
	int64_t budget_us;             /* the whole collection, retries included (900 s) */
	uint32_t retries;              /* more tries of a busy or unavailable target (3) */
	int64_t retry_us;              /* wait before the first retry, doubled (5 s) */
} config_collect;

/*
 * How a service's processes are known in an incident snapshot: by their
 * comm (the kernel's 15-byte process name) or by their cgroup v2 path
 * (the service's cgroup or one below it). Only a service that says so
 * has its processes' full command lines stored: they can carry secrets.
 */
typedef struct config_snapshot_service {
	char *name;
	char **processes;        /* comm names */
	size_t nprocesses;
	char *cgroup;            /* cgroup v2 path starting with '/', or NULL */
	bool full_cmdline;
} config_snapshot_service;

/* Incident snapshots (jobs/snapshot.h): budgets, sampling, who is which service. */
typedef struct config_snapshot {
	uint32_t time_budget_ms;    /* the whole snapshot, archive included (5000) */
	uint64_t size_budget_bytes; /* the archive at most (16 MiB) */
	uint32_t sample_ms;         /* the interval CPU use and deltas are measured over (1000) */
	uint32_t top_threads;       /* threads listed by CPU (20) */
	uint32_t top_processes;     /* processes by CPU and by memory whose files are kept (5) */
	uint64_t file_max_bytes;    /* any one file read (1 MiB) */
	uint64_t kmsg_bytes;        /* the tail of the kernel log kept (1 MiB) */
	uint32_t max_tasks;         /* threads scanned at most (200000) */
	uint32_t nice;              /* the nice value it runs at, 0 to 19 (19) */
	uint32_t cooldown_s;        /* per host, between triggered snapshots (600) */
	config_snapshot_service *services;
	size_t nservices;
} config_snapshot;

/*
 * Where blobs live. "store": "local" (the default) is <home>/blobs; "s3"
 * a bucket. The S3 settings may be given with "store": "local" too: they
 * are then the target of `profreg blobs migrate --to s3` while everything
 * else still uses the local store. Credentials are named here, never
 * written here: each from an environment variable or an owner-only file
 * (jobs/secret.h), by default AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * (when set) AWS_SESSION_TOKEN. The endpoint is https, or plain http to a
 * loopback host only: profiles go into the bucket, and may hold payment
 * data.
 */
typedef struct config_blobs {
	bool use_s3;                  /* "store": "s3" */
	bool s3_set;                  /* the S3 settings are given (endpoint, bucket, region) */
	config_s3 s3;
	char *ca_file;
	uint32_t connect_timeout_ms;  /* 0: the HTTP client's default (10 s) */
	uint32_t timeout_ms;          /* 0: the HTTP client's default (60 s) */
} config_blobs;

/*
 * Where the snapshot agent of a host listens (profreg serve --agent,
 * jobs/agent.h): hosts matching the glob `hosts` are asked at `url`,
 * in which "{host}" stands for the alert's host.
 */
typedef struct config_serve_agent {
	char *hosts;
	char *url;
} config_serve_agent;

/*
 * The trigger API and its safeguards (profreg serve, jobs/serve.h and
 * jobs/capreq.h): "serve": {...} with the keys below, each optional.
 */
typedef struct config_serve {
	char *listen;                 /* "ADDR:PORT" ("127.0.0.1:8070") */
	uint32_t max_body_bytes;      /* a request body at most (65536) */
	uint32_t max_connections;     /* open connections in all (256) */
	uint32_t max_connections_per_ip; /* open connections from one address (32; 0 no
					  * limit, behind a proxy that is one address) */
	uint32_t token_rate;          /* requests per token per minute (60) */
	uint32_t global_rate;         /* requests a second with a valid token, all servers (50) */
	uint32_t host_cooldown_s;     /* between two triggered captures of one host (300) */
	uint32_t default_seconds;     /* CPU profile length when not asked (30) */
	uint32_t max_seconds;         /* the longest that may be asked (120) */
	uint32_t max_hosts;           /* hosts in one request (16) */
	uint32_t session_max_s;       /* hard expiry of every elevated session (900) */
	uint32_t reescalate_s;        /* a host is elevated at most once per window (1800) */
	uint32_t max_sessions_service;/* open elevated sessions per service (4) */
	uint32_t max_sessions_fleet;  /* open elevated sessions in all (10) */
	uint32_t lease_s;             /* a running request is taken over after its
				       * capture time and this (120) */
	char *alert_service_label;    /* the label naming the service ("service") */
	char **alert_host_labels;     /* labels naming the host, the first found
				       * ({"instance", "pod"}) */
	size_t nalert_host_labels;
	/* "agents": [{"hosts": GLOB, "url": URL}]: a firing alert asks the
	 * agent of its host for a snapshot; none: no snapshots are asked */
	config_serve_agent *agents;
	size_t nagents;
	/* the bearer secret between serve and its agents (jobs/secret.h) */
	char *agent_secret_env, *agent_secret_file;
} config_serve;

typedef struct config_service {
	char *name;
	char *team;        /* NULL when not set */
	char **types;      /* profile types to analyse; {"cpu"} by default */
	size_t ntypes;
	char *source_dir;  /* folder collectors drop captures into, or NULL */
	char *repo;        /* git repository of the service, or NULL */
	char **page;       /* targets to page; NULL: the team's or the default */
	size_t npage;
	bool page_set;     /* "page" given (an empty list pages no one) */
	config_tiers tiers; /* -1 fields: the global retention's */
	config_source *sources;  /* "sources", in order */
	size_t nsources;
	uint32_t max_concurrent; /* 0: collect.max_concurrent */
	analysis_week week;      /* its week, whole (see config_service_week) */
	bool own_offset, own_weekend; /* it set utc_offset_hours, weekend of its own */
	int64_t warmup_us;       /* its warm-up (warmup_s); -1: analysis.warmup_s */
} config_service;

/*
 * The week a service's analysis judges it on: its own when it set either
 * part (the rest is analysis'), else NULL (the analysis options' week).
 * Points into s.
 */
const analysis_week *config_service_week(const config_service *s);

/*
 * A service's own warm-up (services.NAME.warmup_s), or NULL when it has
 * none and analysis.warmup_s applies; points into s.
 */
const int64_t *config_service_warmup(const config_service *s);

/*
 * A nightly spread over worker processes (jobs/tasks.h): "workers":
 * {"enabled": true, "lease_s": 60, "max_attempts": 3, "poll_ms": 500,
 * "task_timeout_s": 3600, "coordinator_works": true, "reconnect_s": 300}.
 */
typedef struct config_workers {
	bool enabled;               /* nightly queues tasks (also: nightly --workers) */
	uint32_t lease_s;           /* a task's lease, renewed every third of it (60) */
	uint32_t max_attempts;      /* claims of one task before it fails (3) */
	uint32_t poll_ms;           /* how often an idle worker or the coordinator looks (500) */
	uint32_t task_timeout_s;    /* a task is renewed no longer than this (3600) */
	bool coordinator_works;     /* the nightly works tasks while it waits (true) */
	uint32_t reconnect_s;       /* a worker the database dropped tries again this long (300) */
} config_workers;

/*
 * profreg escalate (jobs/escalate.h): "escalate": {...}. The signals are
 * PromQL expressions per service; each host's value is compared with the
 * host's own band (median and MAD of its recent samples). Sessions and
 * captures are admitted under the "serve" section's safeguards.
 */
typedef struct config_escalate_plan {
	uint32_t seconds;   /* CPU profile length of each capture */
	uint32_t every_s;   /* a capture of the host at most this often; 0: back to back */
	bool heap;          /* a heap profile with each CPU profile */
	uint32_t window_s;  /* level 2 only: how long the level lasts */
} config_escalate_plan;

typedef struct config_escalate_ceiling {
	char *query;        /* PromQL, one value per host; NULL: none */
	double max;         /* a host above it is skipped, not profiled */
} config_escalate_ceiling;

typedef struct config_escalate_signal {
	char *name;         /* [a-z0-9_]{1,64}: "p99_latency", "error_rate" */
	char *query;        /* PromQL, one value per host */
} config_escalate_signal;

typedef struct config_escalate_service {
	char *name;
	config_escalate_signal *signals;
	size_t nsignals;
	char *host_label;               /* NULL: escalate.host_label */
	config_escalate_ceiling load;   /* query NULL: escalate.load */
	config_escalate_ceiling memory; /* query NULL: escalate.memory */
	config_escalate_plan level1, level2; /* escalate's, overridden key by key */
} config_escalate_service;

typedef struct config_escalate {
	char *prometheus;           /* base URL of Prometheus's HTTP API; NULL: escalate is off */
	char *host_label;           /* the label naming the host ("instance") */
	uint32_t timeout_ms;        /* one query (5000) */
	uint32_t budget_s;          /* all of a run's queries (40): a one-minute timer's */
	uint32_t max_response_bytes;/* one answer at most (4 MiB) */
	uint32_t max_series;        /* series in one answer at most (10000) */
	uint32_t window_s;          /* the band's history: samples this recent (3600) */
	uint32_t min_samples;       /* history before a host is judged (10) */
	double band_mads;           /* the band: median + this many scales (4) */
	double large_mads;          /* this many scales is large: straight to level 2 (12) */
	double rel_floor;           /* the scale at least this share of the median (0.05) */
	double abs_floor;           /* the scale at least this (0) */
	uint32_t persist_runs;      /* runs outside the band before level 2 (3) */
	uint32_t cooldown_s;        /* back inside this long before de-escalation (300) */
	uint32_t keep_days;         /* signal samples are kept this long (14) */
	config_escalate_ceiling load, memory;
	config_escalate_plan level1, level2;
	config_escalate_service *services;
	size_t nservices;
} config_escalate;

typedef struct config {
	profile_limits limits;
	analysis_opts analysis;
	config_retention retention;
	config_paging paging;
	config_metrics metrics;
	config_reports reports;
	config_collect collect;
	config_snapshot snapshot;
	config_blobs blobs;
	config_serve serve;
	config_workers workers;
	config_escalate escalate;
	config_service *services;
	size_t nservices;
	char *path;   /* the file read, NULL when none */
	/*
	 * 16 hex digits of the SHA-256 of the file's "analysis", "limits",
	 * "services" and "collect" as canonical JSON (of "{}" without a
	 * file): what a worker's night must share with its coordinator.
	 */
	char fingerprint[17];
} config;

/*
 * The configuration reference in Markdown: every key the loader reads,
 * its type, default and meaning, written from the loader's own tables.
 * *out is the caller's to free.
 */
int config_reference(char **out, pr_error *err);

/* The file's settings for a service, or NULL. */
const config_service *config_service_find(const config *c, const char *name);

/* The warm-up that applies to service s (NULL: one not in the file). */
int64_t config_warmup_of(const config *c, const config_service *s);

/* The escalate settings of a service, or NULL. */
const config_escalate_service *config_escalate_find(const config *c, const char *name);

/* The snapshot settings of a service, or NULL. */
const config_snapshot_service *config_snapshot_service_find(const config *c, const char *name);

/* A target by name, or NULL. */
const config_target *config_target_find(const config *c, const char *name);

/*
 * The targets that page for a service (see the routing rule above), whose
 * team in the database is `team` (NULL: none). The array points into
 * `c`; *n may be 0.
 */
char *const *config_page_targets(const config *c, const char *service, const char *team,
				 size_t *n);

/* The retention tiers of a service: its own, filled in from the global. */
config_tiers config_service_tiers(const config *c, const char *service);

/*
 * The defaults, then the file `path` when it is not NULL (a missing or
 * unreadable file is an error). Release with config_release, also after
 * a failure.
 */
int config_load(config *out, const char *path, pr_error *err);
void config_release(config *c);

/*
 * What `config check` adds to loading: every service's drop folder is a
 * readable directory, its file_sd files are readable and its repository
 * exists. Loading does not check
 * them, so that the nightly can fail one service and go on with the rest.
 */
int config_check_paths(const config *c, pr_error *err);

#endif
