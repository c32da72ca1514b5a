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
 *                  "abs_margin_pp": X, "fdr": X, "mw_alpha": X,
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
 *     "reports":  {"dir": "PATH", "base_url": "URL"},
 *     "services": {"NAME": {"team": "T", "types": ["cpu", ...],
 *                           "source": {"dir": "PATH"}, "repo": "PATH",
 *                           "page": ["TARGET", ...],
 *                           "retention": {"hot_days": N, "summary_days": N,
 *                                         "summary_top": N}}}
 *   }
 *
 * Who is paged for a service: its own "page" list, else its team's list
 * under paging.teams, else paging.default; an empty list pages no one.
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
} config_reports;

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
} config_service;

typedef struct config {
	profile_limits limits;
	analysis_opts analysis;
	config_retention retention;
	config_paging paging;
	config_metrics metrics;
	config_reports reports;
	config_service *services;
	size_t nservices;
	char *path;   /* the file read, NULL when none */
} config;

/* The file's settings for a service, or NULL. */
const config_service *config_service_find(const config *c, const char *name);

/* A target by name, or NULL. */
const config_target *config_target_find(const config *c, const char *name);

/*
 * The targets that page for a service (see the routing rule above). The
 * array points into `c`; *n may be 0.
 */
char *const *config_page_targets(const config *c, const char *service, size_t *n);

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
 * readable directory and its repository exists. Loading does not check
 * them, so that the nightly can fail one service and go on with the rest.
 */
int config_check_paths(const config *c, pr_error *err);

#endif
