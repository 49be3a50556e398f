package resetter

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams"
)

// Exit codes, as Java's StreamsResetter: 0 success, 1 an error or a topic not found.
const (
	ExitSuccess = 0
	ExitError   = 1
)

// Connect opens the cluster for o; tests replace it.
var Connect = func(o *Options) (Cluster, error) {
	cfg, err := kstreams.ConfigFromProperties(o.Properties)
	if err != nil {
		return nil, fmt.Errorf("--command-config %s: %w", o.CommandConfig, err)
	}
	sc := cfg.SaramaConfig()
	sc.ClientID = "kstreams-application-reset"
	sc.Net.DialTimeout = 10 * time.Second
	return NewSaramaCluster(o.BootstrapServers, sc)
}

// Run runs the command with args (without the program name), writing what it does to stdout
// and errors to stderr, and returns the exit code: 0 done (or -h), 1 an error (a usage error
// with the usage, "ERROR: ..." otherwise) or an input topic that does not exist.
func Run(args []string, stdout, stderr io.Writer) int {
	o, err := ParseArgs(args)
	var ue *UsageError
	switch {
	case errors.Is(err, ErrHelp):
		Usage(stdout)
		return ExitSuccess
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s\n\n", ue.Msg)
		Usage(stderr)
		return ExitError
	case err != nil:
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return ExitError
	}
	for _, n := range o.Notes {
		fmt.Fprintln(stdout, n)
	}
	c, err := Connect(o)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: connecting to %s: %v\n", strings.Join(o.BootstrapServers, ","), err)
		return ExitError
	}
	defer c.Close()
	code, err := Reset(o, c, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return ExitError
	}
	return code
}

// ErrGroupActive is wrapped by the *GroupActiveError Reset returns when the application's
// group has members and Force is not set.
var ErrGroupActive = errors.New("consumer group is still active")

// GroupActiveError is the application's group with members: an instance still runs, or left
// a member behind that its session timeout has not yet expired. Its message is Java's
// (IllegalStateException in StreamsResetter).
type GroupActiveError struct {
	Group   string
	Members []Member
}

func (e *GroupActiveError) Error() string {
	ms := make([]string, len(e.Members))
	for i, m := range e.Members {
		ms[i] = m.String()
	}
	return fmt.Sprintf("Consumer group '%s' is still active and has following members: %s. "+
		"Make sure to stop all running application instances before running the reset tool. "+
		"You can use option '--force' to remove active members from the group.", e.Group, list(ms))
}

// Unwrap returns ErrGroupActive.
func (e *GroupActiveError) Unwrap() error { return ErrGroupActive }

// ErrNotInternalTopic is returned by Reset when --internal-topics names a topic that is not one
// of the application's internal topics.
var ErrNotInternalTopic = errors.New("invalid topic specified in the --internal-topics option")

// list prints topics as Java prints a list: [a, b].
func list(s []string) string { return "[" + strings.Join(s, ", ") + "]" }

// Reset resets the application as o says on c, printing each step to out as Java's
// StreamsResetter does, in this order: refuse (*GroupActiveError) while the group has members
// unless o.Force; check o.InternalTopics (ErrNotInternalTopic) and, with o.StateDir, delete the
// local state (a *kstreams.StateDirError wrapping kstreams.ErrStateDirLocked while an instance
// holds it), both before anything on the cluster changes; remove the members (o.Force); commit
// the input topics' new offsets and the intermediate topics' end offsets; delete the internal
// topics. With o.DryRun it prints the same and changes nothing. It returns ExitError without
// an error when an input or intermediate topic does not exist (the others are still reset).
func Reset(o *Options, c Cluster, out io.Writer) (int, error) {
	app := o.ApplicationID
	members, err := c.Members(app)
	if err != nil {
		return ExitError, err
	}
	if len(members) > 0 && !o.Force {
		return ExitError, &GroupActiveError{Group: app, Members: members}
	}
	topics, err := c.Topics()
	if err != nil {
		return ExitError, fmt.Errorf("listing topics: %w", err)
	}
	all := slices.Sorted(func(yield func(string) bool) {
		for t := range topics {
			if !yield(t) {
				return
			}
		}
	})
	inferred := InternalTopics(app, all, o.InputTopics, o.IntermediateTopics)
	toDelete, how := inferred, "inferred"
	if len(o.InternalTopics) > 0 {
		for _, t := range o.InternalTopics {
			if !slices.Contains(inferred, t) {
				//lint:ignore ST1005 the text is Kafka's own reset tool's, sentence by sentence, for scripts that match it
				return ExitError, fmt.Errorf("%w: %s is not an internal topic of application %s on the cluster. Ensure that "+
					"the topics specified are all internal topics. Do a dry run without the --internal-topics option to see "+
					"the list of all internal topics that can be deleted.", ErrNotInternalTopic, t, app)
			}
		}
		toDelete, how = o.InternalTopics, "specified"
	}
	if o.DryRun {
		fmt.Fprintln(out, "----Dry run displays the actions which will be performed when running Streams Reset Tool----")
	}
	if len(members) > 0 {
		fmt.Fprintf(out, "Force deleting all active members in the group: %s\n", app)
	}
	if o.StateDir != "" {
		dir := filepath.Join(o.StateDir, app)
		fmt.Fprintf(out, "Deleting the local state in %s\n", dir)
		if !o.DryRun {
			if err := kstreams.CleanUpStateDir(o.StateDir, app); err != nil {
				return ExitError, err
			}
		}
	}
	if len(members) > 0 && !o.DryRun {
		if err := c.RemoveMembers(app, members); err != nil {
			return ExitError, fmt.Errorf("removing the members of group %s: %w", app, err)
		}
	}
	code, err := resetOffsets(o, c, topics, out)
	if err != nil {
		return ExitError, fmt.Errorf("resetting offsets failed: %w", err)
	}
	fmt.Fprintf(out, "Deleting %s internal topics %s\n", how, list(toDelete))
	if !o.DryRun && len(toDelete) > 0 {
		if err := c.DeleteTopics(toDelete); err != nil {
			return ExitError, fmt.Errorf("encountered an error deleting one or more topics: %w", err)
		}
	}
	fmt.Fprintln(out, "Done.")
	if o.StateDir == "" {
		fmt.Fprintf(out, "Remember to delete the local state of every instance before restarting it "+
			"(KafkaStreams#cleanUp, kstreams.CleanUpStateDir, or this tool's --state-dir): "+
			"%s by default\n", filepath.Join(os.TempDir(), "kafka-streams", app))
	}
	return code, nil
}

// resetOffsets commits the input topics' offsets as o.Mode says and the intermediate topics'
// end offsets (unless o.DryRun).
func resetOffsets(o *Options, c Cluster, topics map[string]int32, out io.Writer) (int, error) {
	app := o.ApplicationID
	if len(o.InputTopics) == 0 && len(o.IntermediateTopics) == 0 {
		fmt.Fprintln(out, "No input or intermediate topics specified. Skipping seek.")
		return ExitSuccess, nil
	}
	if len(o.InputTopics) > 0 {
		fmt.Fprintf(out, "Reset-offsets for input topics %s\n", list(o.InputTopics))
	}
	if len(o.IntermediateTopics) > 0 {
		fmt.Fprintf(out, "Seek-to-end for intermediate topics %s\n", list(o.IntermediateTopics))
	}
	code := ExitSuccess
	partitions := func(kind string, names []string) []TopicPartition {
		var missing []string
		var out2 []TopicPartition
		for _, t := range names {
			n, ok := topics[t]
			if !ok {
				missing = append(missing, t)
				continue
			}
			for p := range n {
				out2 = append(out2, TopicPartition{t, p})
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(out, "Following %s topics are not found, skipping them\n", kind)
			for _, t := range missing {
				fmt.Fprintf(out, "Topic: %s\n", t)
			}
			code = ExitError
		}
		return out2
	}
	input := partitions("input", o.InputTopics)
	intermediate := partitions("intermediate", o.IntermediateTopics)
	all := append(slices.Clone(input), intermediate...)
	if len(all) == 0 {
		return code, nil
	}
	bounds, err := c.Bounds(all)
	if err != nil {
		return code, err
	}
	commit := map[TopicPartition]int64{}
	if len(input) > 0 {
		committed, err := c.Committed(app, input)
		if err != nil {
			return code, err
		}
		var atTime map[TopicPartition]int64
		switch o.Mode {
		case ToDatetime:
			atTime, err = c.OffsetsForTime(input, o.Time.UnixMilli())
		case ByDuration:
			atTime, err = c.OffsetsForTime(input, time.Now().Add(-o.Duration).UnixMilli())
		}
		if err != nil {
			return code, err
		}
		fmt.Fprintf(out, "Following input topics offsets will be reset to (for consumer group %s)\n", app)
		for _, tp := range input {
			l := Lookup{Bounds: bounds[tp]}
			l.Committed, l.HasCommit = committed[tp]
			l.AtTime, l.HasAtTime = atTime[tp]
			off, notes := Target(o, tp, l)
			for _, n := range notes {
				fmt.Fprintln(out, n)
			}
			commit[tp] = off
			fmt.Fprintf(out, "Topic: %s Partition: %d Offset: %d\n", tp.Topic, tp.Partition, off)
		}
	}
	if len(intermediate) > 0 {
		fmt.Fprintf(out, "Following intermediate topics offsets will be reset to end (for consumer group %s)\n", app)
		seen := map[string]bool{}
		for _, tp := range intermediate {
			commit[tp] = bounds[tp].Latest
			if !seen[tp.Topic] {
				seen[tp.Topic] = true
				fmt.Fprintf(out, "Topic: %s\n", tp.Topic)
			}
		}
	}
	if !o.DryRun {
		if err := c.Commit(app, commit); err != nil {
			return code, err
		}
	}
	fmt.Fprintln(out, "Done.")
	return code, nil
}
