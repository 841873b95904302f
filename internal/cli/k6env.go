package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/knee-dev/knee/k6script"
)

// k6 reads its options from K6_ variables too, above the script's options
// and below its command line (its internal/cmd/config.go; the names are
// lib/options.go's, config.go's and runtime_options.go's envconfig tags,
// k6 v1.8.1). A script run under `K6_VUS=50 k6 run` in a CI job must not
// silently run the script's own 10 VUs under knee: each variable knee
// cannot take is refused before the start.
var (
	// k6EnvFlags are the variables knee takes, as the flag of the same
	// meaning when the command line left it alone.
	k6EnvFlags = []struct{ env, flag string }{
		{"K6_VUS", "vus"},
		{"K6_DURATION", "duration"},
		{"K6_ITERATIONS", "iterations"},
		{"K6_STAGES", "stage"},
		{"K6_SUMMARY_EXPORT", "summary-export"},
	}
	// k6EnvRefused change what k6 sends, measures, judges or writes;
	// knee reads none of them from the environment.
	k6EnvRefused = []string{
		"K6_PAUSED", "K6_NO_SETUP", "K6_SETUP_TIMEOUT", "K6_NO_TEARDOWN", "K6_TEARDOWN_TIMEOUT", "K6_RPS",
		"K6_DNS", "K6_MAX_REDIRECTS", "K6_USER_AGENT", "K6_BATCH", "K6_BATCH_PER_HOST", "K6_INSECURE_SKIP_TLS_VERIFY",
		"K6_TLS_CIPHER_SUITES", "K6_TLS_VERSION", "K6_TLSAUTH", "K6_THROW", "K6_THRESHOLDS", "K6_BLACKLIST_IPS",
		"K6_BLOCK_HOSTNAMES", "K6_HOSTS", "K6_NO_CONNECTION_REUSE", "K6_NO_VU_CONNECTION_REUSE",
		"K6_MIN_ITERATION_DURATION", "K6_SUMMARY_TREND_STATS", "K6_SUMMARY_TIME_UNIT", "K6_SYSTEM_TAGS", "K6_TAGS",
		"K6_NO_COOKIES_RESET", "K6_DISCARD_RESPONSE_BODIES", "K6_LOCAL_IPS", "K6_CONSOLE_OUTPUT", "K6_OUT",
		"K6_NEW_MACHINE_READABLE_SUMMARY", "K6_EXECUTION_SEGMENT", "K6_EXECUTION_SEGMENT_SEQUENCE",
	}
	// k6EnvRefusedIf are refused only at the value that changes what k6
	// does (k6 reads a boolean as strconv.ParseBool does): k6 with no
	// thresholds judged exits 0 where knee would exit 99, without system
	// variables in __ENV a script sees other values.
	k6EnvRefusedIf = []struct {
		env  string
		when bool
	}{
		{"K6_NO_THRESHOLDS", true},
		{"K6_NO_SUMMARY", true},
		{"K6_INCLUDE_SYSTEM_ENV_VARS", false},
	}
)

// applyK6Env sets the flags of fl that k6's variables stand for, unless the
// command line (or a KNEE_ variable) set them, and refuses the variables
// knee cannot take, naming each. The others of k6's (its cloud, its web
// dashboard, usage reports, its summary's layout) change nothing knee does.
func applyK6Env(fl *pflag.FlagSet, getenv func(string) string) error {
	if getenv == nil {
		return nil
	}
	// A duration, iteration count or stages given on the command line
	// replace those of every lower tier, the variables' too (k6's
	// lib.Options.Apply); the VUs go on their own.
	cliShape := fl.Changed("duration") || fl.Changed("iterations") || fl.Changed("stage") || fl.Changed("stages")
	var errs []error
	for _, e := range k6EnvFlags {
		v := strings.TrimSpace(getenv(e.env))
		if v == "" || fl.Changed(e.flag) || cliShape && (e.flag == "duration" || e.flag == "iterations" || e.flag == "stage") {
			continue
		}
		values := []string{v}
		switch e.flag {
		case "stage": // k6's list: 30s:10,1m:20
			values = strings.Split(v, ",")
		case "duration": // k6's syntax, which --duration (Go's) does not all read: 1d, 90
			d, err := k6script.ParseDuration(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", e.env, v, err))
				continue
			}
			values = []string{d.String()}
		}
		for _, val := range values {
			if err := fl.Set(e.flag, strings.TrimSpace(val)); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q (k6's variable for --%s): %w", e.env, v, e.flag, err))
				break
			}
		}
	}
	var refused []string
	for _, name := range k6EnvRefused {
		if getenv(name) != "" {
			refused = append(refused, name)
		}
	}
	for _, e := range k6EnvRefusedIf {
		if b, err := strconv.ParseBool(getenv(e.env)); err == nil && b == e.when {
			refused = append(refused, e.env)
		}
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		errs = append(errs, fmt.Errorf("%s set: k6 reads it as the script's option or its own flag and knee does not read it from the environment; "+
			"set it in the script's options (or knee's flag) instead, or unset it (knee takes K6_VUS, K6_DURATION, K6_ITERATIONS, K6_STAGES and K6_SUMMARY_EXPORT)",
			strings.Join(refused, ", ")))
	}
	return errors.Join(errs...)
}
