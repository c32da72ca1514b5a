/*
 * config.h: the configuration file (JSON), validated before anything runs.
 *
 * Read from --config FILE, else <home>/profreg.json when it exists; no
 * file means the built-in defaults. Every unknown key and every value of
 * the wrong type or range is an error that names its JSON path
 * ("config 'p.json': limits.max_depth: expected a positive integer").
 * Command-line flags override the file.
 *
 *   {
 *     "limits":   {"max_input_bytes": N, "max_decompressed_bytes": N,
 *                  "max_samples": N, "max_depth": N, "max_string_length": N},
 *     "analysis": {"window_days": N, "min_captures": N, "rel_margin": X,
 *                  "abs_margin_pp": X, "fdr": X, "mw_alpha": X,
 *                  "severity": {"q_max": X, "critical_pp": X, "critical_rel": X,
 *                               "critical_rel_pp": X, "high_pp": X, "medium_pp": X}},
 *     "retention": {"forensic_days": N (0: evidence is kept forever)},
 *     "services": {"NAME": {"team": "T", "types": ["cpu", ...],
 *                           "source": {"dir": "PATH"}, "repo": "PATH"}}
 *   }
 *
 * Which wins: the database registers services and holds their opt-in
 * (`profreg service add/enable/disable`); the file holds where their
 * profiles come from. A service in the file that is not registered, or
 * not enabled, is reported and skipped, never enabled behind anyone's
 * back; the file has no "enabled" key, so the two cannot disagree.
 */
#ifndef PR_CONFIG_H
#define PR_CONFIG_H

#include "analysis.h"
#include "cli.h"
#include "pipeline/profile.h"

typedef struct config_service {
	char *name;
	char *team;        /* NULL when not set */
	char **types;      /* profile types to analyse; {"cpu"} by default */
	size_t ntypes;
	char *source_dir;  /* folder collectors drop captures into, or NULL */
	char *repo;        /* git repository of the service, or NULL */
} config_service;

typedef struct config {
	profile_limits limits;
	analysis_opts analysis;
	config_service *services;
	size_t nservices;
	char *path;   /* the file read, NULL when none */
} config;

/* The file's settings for a service, or NULL. */
const config_service *config_service_find(const config *c, const char *name);

/* Defaults, then the file (if any). Release with config_release. */
int config_load(config *out, const cli_ctx *ctx, pr_error *err);
void config_release(config *c);

#endif
