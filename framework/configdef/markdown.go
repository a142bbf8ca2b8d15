package configdef

import (
	"sort"
	"strings"
)

// Markdown renders reference documentation for keys: one "### <group>"
// section per group, in the order groups first appear (keys without a group
// come first, without a heading), each a table of every key with its type,
// default, valid values, importance and documentation, ordered by the key's
// order in its group. The output is deterministic so that generated docs
// can be checked for staleness by regenerating and comparing.
func Markdown(keys []KeyInfo) string {
	var groups []string
	byGroup := map[string][]KeyInfo{}
	for _, k := range keys {
		g := ""
		if k.Group != nil {
			g = *k.Group
		}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], k)
	}
	// Ungrouped keys first.
	sort.SliceStable(groups, func(i, j int) bool { return groups[i] == "" && groups[j] != "" })

	var b strings.Builder
	for gi, g := range groups {
		if gi > 0 {
			b.WriteString("\n")
		}
		if g != "" {
			b.WriteString("### " + g + "\n\n")
		}
		ks := byGroup[g]
		sort.SliceStable(ks, func(i, j int) bool { return ks[i].Order < ks[j].Order })
		b.WriteString("| Name | Type | Default | Valid values | Importance | Description |\n")
		b.WriteString("|---|---|---|---|---|---|\n")
		for _, k := range ks {
			def := "*required*"
			if !k.Required {
				switch {
				case k.DefaultValue == nil:
					def = "null"
				case *k.DefaultValue == "":
					def = `""`
				default:
					def = code(*k.DefaultValue)
				}
			}
			valid := ""
			if k.ValidValues != "" {
				valid = cell(k.ValidValues)
			}
			b.WriteString("| " + code(k.Name) + " | " + string(k.Type) + " | " + def + " | " + valid +
				" | " + strings.ToLower(string(k.Importance)) + " | " + cell(k.Documentation) + " |\n")
		}
	}
	return b.String()
}

// Markdown renders d's keys; see the package-level Markdown.
func (d *Def) Markdown() string { return Markdown(d.Infos()) }

// cell makes text safe inside a Markdown table cell: one line, escaped
// pipes, and no raw angle brackets (a Markdown renderer would take "k<N>"
// for an HTML tag and hide it). Kafka-style <code>x</code> becomes `x`.
func cell(s string) string {
	s = strings.NewReplacer("<code>", "`", "</code>", "`").Replace(s)
	s = strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
	return oneLine(s)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.TrimSpace(s)
}

// code renders s as inline code, using a longer fence when s holds
// backticks. Code spans show their text literally, so only pipes (which
// would end the table cell) are escaped.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + oneLine(s) + pad + fence
}
