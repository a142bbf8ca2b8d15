// Command abtest summarizes an interleaved A/B run of a Go benchmark: it
// reads `go test -bench` output of two builds (bench/abtest/run.sh writes
// them, alternating the builds) and prints, per benchmark and unit, the
// median of each and their ratio.
//
//	go run ./bench/abtest base=base.txt new=new.txt
//
// It only summarizes: it must not run or build anything.
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// sample is every value reported for one benchmark and unit by one build.
type sample map[string][]float64

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: abtest NAME=FILE NAME=FILE")
		os.Exit(2)
	}
	var names []string
	var samples []sample
	var keys []string
	for _, arg := range os.Args[1:] {
		name, path, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "abtest: want NAME=FILE, got %q\n", arg)
			os.Exit(2)
		}
		s, order, err := read(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "abtest:", err)
			os.Exit(1)
		}
		names, samples = append(names, name), append(samples, s)
		for _, k := range order {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	fmt.Printf("| benchmark | unit | %s (median, n) | %s (median, n) | %s/%s |\n|---|---|---|---|---|\n",
		names[0], names[1], names[1], names[0])
	for _, k := range keys {
		a, b := samples[0][k], samples[1][k]
		bench, unit, _ := strings.Cut(k, "\t")
		ratio := "–"
		if len(a) > 0 && len(b) > 0 && median(a) != 0 {
			ratio = fmt.Sprintf("%.3f", median(b)/median(a))
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", bench, unit, cell(a), cell(b), ratio)
	}
}

func cell(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.4g (%d)", median(xs), len(xs))
}

// read parses benchmark result lines: name, iterations, then value/unit
// pairs. The -GOMAXPROCS suffix of the name is dropped.
func read(path string) (sample, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	s := sample{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			continue
		}
		name := fields[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				break
			}
			k := name + "\t" + fields[i+1]
			if _, seen := s[k]; !seen {
				order = append(order, k)
			}
			s[k] = append(s[k], v)
		}
	}
	return s, order, sc.Err()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
