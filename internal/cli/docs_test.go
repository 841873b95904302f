package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// docCommands returns, for every fenced block of the Markdown file path,
// the knee commands it shows ("knee …", "go run ./cmd/knee …", with KNEE_
// variables before them; a $VARIABLE's value is 1), continuation lines
// joined and comments dropped,
// each with the line it starts on. Lines of other tools and of output are
// not commands.
func docCommands(t *testing.T, path string) (cmds [][]string, lines []int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in := false
	var joined string
	start := 0
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in, joined = !in, ""
			continue
		}
		if !in {
			continue
		}
		if joined == "" {
			start = i + 1
		}
		if strings.HasSuffix(line, "\\") {
			joined += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		text := strings.TrimSpace(joined + line)
		joined = ""
		text = strings.TrimPrefix(text, "$ ")
		if rest, ok := strings.CutPrefix(text, "go run ./cmd/knee "); ok {
			text = "knee " + rest
		}
		words, _, err := shellWords(text)
		if err != nil || len(words) == 0 {
			continue // not a command line (output, prose)
		}
		k := 0
		for k < len(words) && strings.HasPrefix(words[k], EnvPrefix) && strings.Contains(words[k], "=") {
			k++
		}
		// A shell variable stands for a value the reader's shell fills in
		// ($PID, $i): any number will do for parsing.
		for j, w := range words {
			if strings.HasPrefix(w, "$") {
				words[j] = "1"
			}
		}
		if k < len(words) && words[k] == "knee" {
			cmds, lines = append(cmds, words), append(lines, start)
		}
	}
	return cmds, lines
}

// Every knee command shown in README.md and docs/ parses as written, on a
// fresh command tree (checkKneeCommand): its command exists, its flags and
// values are the command's own, its arguments pass the command's check.
// A renamed flag or command fails here before it fails a reader.
func TestDocsCommandsParse(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, docs...)
	env := Env{Getenv: func(string) string { return "" }}
	n := 0
	for _, f := range files {
		cmds, lines := docCommands(t, f)
		for i, words := range cmds {
			rel, _ := filepath.Rel(root, f)
			if checkKneeCommand(t, env, rel+":"+itoa(lines[i]), words) {
				n++
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d knee commands found in README.md and docs/: the extraction is broken", n)
	}
}

func itoa(n int) string {
	return strconv.Itoa(n)
}
