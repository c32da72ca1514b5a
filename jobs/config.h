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
 *                               "critical_rel_pp": X, "high_pp": X, "medium_pp": X}}
 *   }
 */
#ifndef PR_CONFIG_H
#define PR_CONFIG_H

#include "analysis.h"
#include "cli.h"
#include "pipeline/profile.h"

typedef struct config {
	profile_limits limits;
	analysis_opts analysis;
	char *path;   /* the file read, NULL when none */
} config;

/* Defaults, then the file (if any). Release with config_release. */
int config_load(config *out, const cli_ctx *ctx, pr_error *err);
void config_release(config *c);

#endif
