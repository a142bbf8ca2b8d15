// Package properties reads and writes Java .properties files, the format of
// Kafka Connect's worker.properties and of the files the file config
// provider reads.
//
// It implements the parts of java.util.Properties.load that configuration
// files use: '#' and '!' comments, '=', ':' or whitespace separators, line
// continuations with a trailing backslash, and the escapes \t \n \r \f \\
// \uXXXX. What it must not do: interpret keys; that is the config
// definitions' job.
package properties

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Parse reads a properties stream. Later duplicates of a key win, as in Java.
func Parse(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	lineNo := 0
	var logical strings.Builder
	startLine := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if logical.Len() == 0 {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			startLine = lineNo
		} else {
			line = strings.TrimLeft(line, " \t\f")
		}
		if continues(line) {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		k, v, err := splitEntry(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		out[k] = v
		logical.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if logical.Len() > 0 {
		k, v, err := splitEntry(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		out[k] = v
	}
	return out, nil
}

// continues reports whether a line ends with an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func splitEntry(s string) (string, string, error) {
	// The key ends at the first unescaped '=', ':' or whitespace.
	end := len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	key, err := unescape(s[:end])
	if err != nil {
		return "", "", err
	}
	rest := strings.TrimLeft(s[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	val, err := unescape(rest)
	if err != nil {
		return "", "", fmt.Errorf("key %q: %w", key, err)
	}
	return key, val, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i == len(s)-1 {
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
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\u escape in %q", s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", fmt.Errorf("malformed \\u escape in %q", s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// Write writes props sorted by key, escaping what Parse would misread.
func Write(w io.Writer, props map[string]string) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		fmt.Fprintf(bw, "%s=%s\n", escape(k, true), escape(props[k], false))
	}
	return bw.Flush()
}

func escape(s string, isKey bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\f':
			b.WriteString(`\f`)
		case isKey && (r == '=' || r == ':' || r == ' '):
			b.WriteByte('\\')
			b.WriteRune(r)
		case !isKey && i == 0 && r == ' ':
			b.WriteString(`\ `)
		case (r == '#' || r == '!') && i == 0:
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
