package systemtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// LoadProperties reads a Java properties file of the simple form Kafka's system tests write:
// one key=value (or key:value) a line, '#' and '!' comments, blank lines skipped, keys and
// values trimmed. Line continuations and escapes are not supported (a line ending in '\' is an
// error). Java: org.apache.kafka.common.utils.Utils.loadProps.
func LoadProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return props, nil
}

// ParseProperties parses properties as LoadProperties does.
func ParseProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			return nil, fmt.Errorf("line %d: continuation lines are not supported", n)
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			props[line] = ""
			continue
		}
		props[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return props, sc.Err()
}
