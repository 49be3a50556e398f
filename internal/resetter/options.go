package resetter

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Mode is how the input topics' committed offsets are reset: one of the --to-* / --by-* /
// --shift-by / --from-file options; ToEarliest when none is given.
type Mode int

// The reset modes, each a Java StreamsResetter option.
const (
	// ToEarliest (--to-earliest, the default): each partition's earliest offset (its log start).
	ToEarliest Mode = iota
	// ToLatest (--to-latest): each partition's end offset (its high watermark).
	ToLatest
	// ToOffset (--to-offset N): offset N on every partition, clamped to [earliest, latest].
	ToOffset
	// ToDatetime (--to-datetime T): the first offset whose record timestamp is at or after T;
	// a partition without one goes to its end offset.
	ToDatetime
	// ByDuration (--by-duration D): as ToDatetime with T = now minus D.
	ByDuration
	// ShiftBy (--shift-by N): the committed offset plus N (N may be negative), clamped to
	// [earliest, latest]; a partition without a committed offset shifts from its end offset,
	// where Java's consumer starts (auto.offset.reset=latest).
	ShiftBy
	// FromFile (--from-file F): the offsets of a CSV reset plan, TOPIC,PARTITION,OFFSET a line,
	// clamped to [earliest, latest].
	FromFile
)

var modeFlags = map[Mode]string{ToEarliest: "to-earliest", ToLatest: "to-latest", ToOffset: "to-offset",
	ToDatetime: "to-datetime", ByDuration: "by-duration", ShiftBy: "shift-by", FromFile: "from-file"}

// String returns the mode's option name, e.g. "to-earliest".
func (m Mode) String() string { return modeFlags[m] }

// TopicPartition is one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String returns "topic-partition", as Java's TopicPartition prints.
func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Options are the command line of kstreams-application-reset, parsed and checked.
type Options struct {
	// ApplicationID is --application-id: the group id and internal topics' prefix. Required.
	ApplicationID string
	// BootstrapServers is --bootstrap-server (comma-separated); default localhost:9092.
	BootstrapServers []string
	// InputTopics (--input-topics) get their offsets reset by Mode.
	InputTopics []string
	// IntermediateTopics (--intermediate-topics, deprecated in Java) get their offsets set to
	// the end.
	IntermediateTopics []string
	// InternalTopics (--internal-topics) are the internal topics to delete; empty means every
	// internal topic of the application found on the cluster. Each must be one of those.
	InternalTopics []string
	// Mode and its argument: Offset for ToOffset, Shift for ShiftBy, Time for ToDatetime,
	// Duration for ByDuration, Plan for FromFile.
	Mode     Mode
	Offset   int64
	Shift    int64
	Time     time.Time
	Duration time.Duration
	Plan     map[TopicPartition]int64
	// DryRun (--dry-run) prints what would be done and changes nothing.
	DryRun bool
	// Force (--force) removes the group's members first (KIP-571) instead of refusing.
	Force bool
	// CommandConfig (--command-config, or --config-file, deprecated in Java 4.x) is a client properties
	// file: security.protocol, sasl.*, ssl.* and bootstrap.servers as kstreams.ConfigFromProperties
	// reads them.
	CommandConfig string
	// Properties are CommandConfig's properties.
	Properties map[string]string
	// Notes are warnings about the command line to print first (a deprecated option).
	Notes []string
	// StateDir (--state-dir) is the state.dir whose <state.dir>/<application.id> is wiped;
	// "" leaves local state alone.
	StateDir string
}

// ErrHelp is returned by ParseArgs for -h / --help (exit code 0 after the usage).
var ErrHelp = flag.ErrHelp

// UsageError is a command line that cannot be run; the usage follows it (exit code 1).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// listFlag is a comma-separated list option that may also be repeated.
type listFlag struct{ v *[]string }

func (l listFlag) String() string {
	if l.v == nil {
		return ""
	}
	return strings.Join(*l.v, ",")
}

func (l listFlag) Set(s string) error {
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			*l.v = append(*l.v, t)
		}
	}
	return nil
}

// resetFlags records the reset options given, in order, and their values.
type resetFlags struct {
	given []Mode
	value map[Mode]string
}

var modeHelp = map[Mode]string{
	ToEarliest: "Reset offsets to the earliest offset.",
	ToLatest:   "Reset offsets to the latest offset.",
	ToOffset:   "Reset offsets to a specific offset.",
	ToDatetime: "Reset offsets to the offset of a datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss' (UTC unless it ends in Z, +hh, +hh:mm or -hh:mm).",
	ByDuration: "Reset offsets to the offset of the current time minus a duration. Format: 'PnDTnHnMnS' (ISO-8601, as Java's Duration), or Go's (1h30m).",
	FromFile:   "Reset offsets to the values of a CSV file of TOPIC,PARTITION,OFFSET lines.",
	ShiftBy:    "Reset offsets shifting the committed offset by 'n', where 'n' can be positive or negative.",
}

// flagSet returns the command's flags bound to o, rf and servers.
func flagSet(o *Options, rf *resetFlags, servers *string) *flag.FlagSet {
	fs := flag.NewFlagSet("kstreams-application-reset", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.ApplicationID, "application-id", "", "The Kafka Streams application ID (application.id). Required.")
	fs.StringVar(servers, "bootstrap-server", "", "The server(s) to connect to, HOST1:PORT1,HOST2:PORT2 (default: localhost:9092, or bootstrap.servers of --command-config).")
	fs.Var(listFlag{&o.InputTopics}, "input-topics", "Comma-separated list of user input topics; their offsets are reset to the earliest offset, or as another reset option says (e.g. --input-topics foo --shift-by 5).")
	fs.Var(listFlag{&o.IntermediateTopics}, "intermediate-topics", "[deprecated] Comma-separated list of intermediate user topics (both input and output); their offsets skip to the end.")
	fs.Var(listFlag{&o.InternalTopics}, "internal-topics", "Comma-separated list of internal topics to delete; must be a subset of the internal topics found by default (see --dry-run).")
	for _, m := range []Mode{ToEarliest, ToLatest, ToOffset, ToDatetime, ByDuration, ShiftBy, FromFile} {
		set := func(v string) error {
			rf.given = append(rf.given, m)
			rf.value[m] = strings.TrimSpace(v)
			return nil
		}
		if m == ToEarliest || m == ToLatest {
			fs.BoolFunc(m.String(), modeHelp[m], set)
		} else {
			fs.Func(m.String(), modeHelp[m], set)
		}
	}
	fs.StringVar(&o.CommandConfig, "command-config", "", "Property file of client configs (security.protocol, sasl.*, ssl.* PEM) for the admin client.")
	fs.Func("config-file", "(DEPRECATED, as in Java) The same as --command-config.", func(v string) error {
		o.CommandConfig = v
		o.Notes = append(o.Notes, "Option --config-file has been deprecated and will be removed in a future version. Use --command-config instead.")
		return nil
	})
	fs.BoolVar(&o.Force, "force", false, "Remove the consumer group's members first (to remove stopped members left by a long session timeout). Make sure every application instance is stopped.")
	fs.BoolVar(&o.DryRun, "dry-run", false, "Display the actions that would be performed without executing them.")
	fs.StringVar(&o.StateDir, "state-dir", "", "The application's state.dir: delete the local state in <state-dir>/<application-id> (KafkaStreams#cleanUp), refused while an instance holds it.")
	return fs
}

// Usage writes the command's description and its options to w.
func Usage(w io.Writer) {
	fmt.Fprint(w, usageText)
	var o Options
	var s string
	fs := flagSet(&o, &resetFlags{value: map[Mode]string{}}, &s)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

const usageText = `Usage: kstreams-application-reset --application-id ID [options]

Resets a Kafka Streams application (this library's or Java's) so that it reprocesses its input
from scratch:
* the input topics' committed offsets are reset to the earliest offset (by default), or to a
  position one reset option gives;
* the internal topics Kafka Streams created (topics starting with "<application.id>-" and
  ending in -changelog, -repartition or a foreign-key join's -topic suffixes) are deleted;
  --internal-topics deletes a subset instead;
* output topics are not touched;
* with --state-dir, the local state in <state-dir>/<application-id> is deleted (Java leaves this
  to KafkaStreams#cleanUp); without it, delete that directory before restarting every instance,
  or you will get wrong output.
Run it only while no instance of the application runs; --force removes leftover members first.
It makes irreversible changes: run it once with --dry-run to preview them.

`

// ParseArgs parses and checks the command line (without the program name) and reads the
// --command-config and --from-file files. Errors: ErrHelp for -h/--help; *UsageError for a
// missing --application-id, an unknown option, a bad value, or two reset options; a file
// error for an unreadable or malformed file.
func ParseArgs(args []string) (*Options, error) {
	o := &Options{}
	rf := &resetFlags{value: map[Mode]string{}}
	var servers string
	fs := flagSet(o, rf, &servers)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, &UsageError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, &UsageError{Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if o.ApplicationID == "" {
		return nil, &UsageError{Msg: "Missing required option(s) [application-id]"}
	}
	for _, m := range rf.given {
		if m != rf.given[0] {
			return nil, &UsageError{Msg: fmt.Sprintf("Option \"%s\" can't be used with option \"%s\"", rf.given[0], m)}
		}
	}
	if len(rf.given) > 0 {
		o.Mode = rf.given[0]
	}
	val := func(m Mode) string { return rf.value[m] }
	var err error
	switch o.Mode {
	case ToOffset:
		if o.Offset, err = strconv.ParseInt(val(ToOffset), 10, 64); err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("--to-offset: %q is not an offset (a whole number)", val(ToOffset))}
		}
	case ShiftBy:
		if o.Shift, err = strconv.ParseInt(val(ShiftBy), 10, 64); err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("--shift-by: %q is not a whole number of offsets", val(ShiftBy))}
		}
	case ToDatetime:
		if o.Time, err = ParseDatetime(val(ToDatetime)); err != nil {
			return nil, &UsageError{Msg: "--to-datetime: " + err.Error()}
		}
	case ByDuration:
		if o.Duration, err = ParseDuration(val(ByDuration)); err != nil {
			return nil, &UsageError{Msg: "--by-duration: " + err.Error()}
		}
	case FromFile:
		f, err := os.Open(val(FromFile))
		if err != nil {
			return nil, fmt.Errorf("--from-file: %w", err)
		}
		o.Plan, err = ParsePlan(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--from-file %s: %w", val(FromFile), err)
		}
	}
	if o.CommandConfig != "" {
		f, err := os.Open(o.CommandConfig)
		if err != nil {
			return nil, fmt.Errorf("--command-config: %w", err)
		}
		o.Properties, err = ParseProperties(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--command-config %s: %w", o.CommandConfig, err)
		}
	}
	if servers == "" && o.Properties["bootstrap.servers"] != "" {
		servers = o.Properties["bootstrap.servers"]
	}
	if servers == "" {
		servers = "localhost:9092"
	}
	_ = listFlag{&o.BootstrapServers}.Set(servers)
	return o, nil
}

// ParseDatetime parses --to-datetime as Java's Utils.getDateTime: yyyy-MM-ddTHH:mm:ss.SSS,
// UTC unless followed by Z, +hh, +hhmm or +hh:mm (or -). The fraction may also be absent or
// longer (ns precision).
func ParseDatetime(s string) (time.Time, error) {
	date, clock, ok := strings.Cut(s, "T")
	if !ok || date == "" || clock == "" {
		return time.Time{}, fmt.Errorf("%q does not contain a 'T' according to ISO8601 format (YYYY-MM-DDTHH:mm:SS.sss)", s)
	}
	if !strings.ContainsAny(clock, "+-Z") {
		s += "Z"
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999Z07"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a datetime of the format YYYY-MM-DDTHH:mm:SS.sss (optionally with Z, +hh:mm or -hh:mm)", strings.TrimSuffix(s, "Z"))
}

// ParseDuration parses --by-duration: an ISO-8601 duration as Java's Duration.parse
// ([-]PnDTnHnMn.nS, each part optional, at least one present, a sign allowed on each) or a Go
// duration (90m, 1h30m). It must not be negative.
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration of the format PnDTnHnMnS (e.g. PT1H30M) or a Go duration (1h30m)", s)
	u := strings.ToUpper(s)
	neg := false
	if strings.HasPrefix(u, "-") || strings.HasPrefix(u, "+") {
		neg = u[0] == '-'
		u = u[1:]
	}
	var d time.Duration
	if rest, ok := strings.CutPrefix(u, "P"); ok {
		days, timePart, hasT := strings.Cut(rest, "T")
		if rest == "" || (hasT && timePart == "") {
			return 0, bad
		}
		if days != "" {
			n, ok := strings.CutSuffix(days, "D")
			v, err := strconv.ParseInt(n, 10, 64)
			if !ok || err != nil {
				return 0, bad
			}
			d += time.Duration(v) * 24 * time.Hour
		}
		for timePart != "" {
			i := strings.IndexAny(timePart, "HMS")
			if i <= 0 {
				return 0, bad
			}
			num, unit := timePart[:i], timePart[i]
			timePart = timePart[i+1:]
			if unit == 'S' {
				f, err := strconv.ParseFloat(num, 64)
				if err != nil {
					return 0, bad
				}
				d += time.Duration(f * float64(time.Second))
				if timePart != "" {
					return 0, bad
				}
				continue
			}
			v, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				return 0, bad
			}
			if unit == 'H' {
				d += time.Duration(v) * time.Hour
			} else {
				d += time.Duration(v) * time.Minute
			}
		}
	} else {
		var err error
		if d, err = time.ParseDuration(strings.ToLower(u)); err != nil {
			return 0, bad
		}
	}
	if neg {
		d = -d
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: give how far back from now", s)
	}
	return d, nil
}

// ParsePlan parses a --from-file reset plan: TOPIC,PARTITION,OFFSET a line (blank lines
// skipped). Errors name the line.
func ParsePlan(r io.Reader) (map[TopicPartition]int64, error) {
	plan := map[TopicPartition]int64{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		parts := strings.Split(line, ",")
		if len(parts) != 3 {
			return nil, fmt.Errorf("line %d: %q is not of the format TOPIC,PARTITION,OFFSET", n, line)
		}
		p, err1 := strconv.ParseInt(strings.TrimSpace(parts[1]), 10, 32)
		off, err2 := strconv.ParseInt(strings.TrimSpace(parts[2]), 10, 64)
		if err1 != nil || err2 != nil || p < 0 || strings.TrimSpace(parts[0]) == "" {
			return nil, fmt.Errorf("line %d: %q is not of the format TOPIC,PARTITION,OFFSET", n, line)
		}
		plan[TopicPartition{strings.TrimSpace(parts[0]), int32(p)}] = off
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(plan) == 0 {
		return nil, errors.New("the reset plan is empty")
	}
	return plan, nil
}

// ParseProperties parses a Java properties file: key=value, key:value or key value a line;
// '#' and '!' comment lines; a line ending in an odd number of backslashes continues on the
// next (leading blanks of the next line dropped), as sasl.jaas.config is often written; the
// escapes \t \n \r \f \uXXXX and \<char> in values. Java: java.util.Properties.load.
func ParseProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var logical strings.Builder
	cont := false
	flush := func() {
		line := logical.String()
		logical.Reset()
		k, v := splitProperty(line)
		props[unescape(k)] = unescape(v)
	}
	for sc.Scan() {
		line := sc.Text()
		if cont {
			line = strings.TrimLeft(line, " \t\f")
		} else {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
		}
		trailing := len(line) - len(strings.TrimRight(line, `\`))
		if trailing%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			cont = true
			continue
		}
		logical.WriteString(line)
		cont = false
		flush()
	}
	if cont {
		flush()
	}
	return props, sc.Err()
}

// splitProperty splits a logical line at the first unescaped '=', ':' or blank.
func splitProperty(line string) (string, string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '=', ':':
			return line[:i], strings.TrimLeft(line[i+1:], " \t\f")
		case ' ', '\t', '\f':
			rest := strings.TrimLeft(line[i:], " \t\f")
			if rest != "" && (rest[0] == '=' || rest[0] == ':') {
				rest = strings.TrimLeft(rest[1:], " \t\f")
			}
			return line[:i], rest
		}
	}
	return line, ""
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
