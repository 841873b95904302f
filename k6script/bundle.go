package k6script

import (
	"fmt"
	"github.com/knee-dev/knee/internal/limits"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// bundled is a script and its local imports as one CommonJS program, with
// its source map so errors name the script's own files and lines.
type bundled struct {
	code      string
	sourceMap []byte
	// imports are the k6 modules the script imports, each with where.
	imports map[string]string
}

// bundleName is the name of the bundle beside the entry (never written).
const bundleName = "knee-bundle.js"

// bundle turns entry (ES modules or CommonJS) into one CommonJS program
// that requires only k6 modules. A k6 module knee does not provide, a
// remote import or a syntax error fails here with file:line:col.
func bundle(entry string) (*bundled, error) {
	abs, err := filepath.Abs(entry)
	if err != nil {
		return nil, err
	}
	b := &bundled{imports: map[string]string{}}
	k6 := api.Plugin{
		Name: "knee-k6-modules",
		Setup: func(pb api.PluginBuild) {
			pb.OnResolve(api.OnResolveOptions{Filter: `^k6(/.*)?$`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				if why, bad := unsupported(a.Path); bad {
					return api.OnResolveResult{}, fmt.Errorf("%s", why)
				}
				if !knownModule(a.Path) {
					return api.OnResolveResult{}, fmt.Errorf("module %q is not one knee provides (it has %s)", a.Path, strings.Join(moduleNames(), ", "))
				}
				b.imports[a.Path] = a.Importer
				return api.OnResolveResult{Path: a.Path, External: true}, nil
			})
			// esbuild reads the script and its modules itself: each must be
			// a regular file within limits.Script first (not /dev/zero).
			// No contents returned: esbuild then loads the file as usual.
			pb.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: "file"}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
				return api.OnLoadResult{}, limits.CheckFile(a.Path, limits.Script, "k6 script or module",
					"a script is code, not data: read data with open() or k6/data's SharedArray")
			})
			pb.OnResolve(api.OnResolveOptions{Filter: `^(https?:)?//`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				return api.OnResolveResult{}, fmt.Errorf("remote import %q: knee does not download scripts; save the file beside the script and import it by a relative path (./name.js)", a.Path)
			})
		},
	}
	res := api.Build(api.BuildOptions{
		EntryPoints:       []string{abs},
		Bundle:            true,
		Write:             false,
		Format:            api.FormatCommonJS,
		Platform:          api.PlatformNeutral,
		Target:            api.ES2017,
		Sourcemap:         api.SourceMapLinked,
		SourcesContent:    api.SourcesContentExclude,
		Outfile:           filepath.Join(filepath.Dir(abs), bundleName),
		LogLevel:          api.LogLevelSilent,
		Plugins:           []api.Plugin{k6},
		MainFields:        []string{"module", "main"},
		Charset:           api.CharsetUTF8,
		LegalComments:     api.LegalCommentsNone,
		KeepNames:         false,
		MinifyWhitespace:  false,
		MinifyIdentifiers: false,
	})
	if len(res.Errors) > 0 {
		return nil, buildError(entry, res.Errors)
	}
	for _, f := range res.OutputFiles {
		switch {
		case strings.HasSuffix(f.Path, ".map"):
			b.sourceMap = f.Contents
		default:
			b.code = string(f.Contents)
		}
	}
	if b.code == "" {
		return nil, fmt.Errorf("%s: bundling gave no code", entry)
	}
	return b, nil
}

// buildError lists esbuild's errors as file:line:col: message.
func buildError(entry string, msgs []api.Message) error {
	var lines []string
	for _, m := range msgs {
		text := m.Text
		if m.PluginName != "" && strings.HasPrefix(text, "[plugin") {
			_, text, _ = strings.Cut(text, "] ")
		}
		if m.Location != nil {
			lines = append(lines, fmt.Sprintf("%s:%d:%d: %s", relTo(entry, m.Location.File), m.Location.Line, m.Location.Column+1, text))
		} else {
			lines = append(lines, fmt.Sprintf("%s: %s", entry, text))
		}
	}
	sort.Strings(lines)
	return &ScriptError{Msg: strings.Join(lines, "\n")}
}

// relTo names file as the user would: relative to the entry's directory
// when it is there, else as given.
func relTo(entry, file string) string {
	if file == "" {
		return entry
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(mustAbs(entry)), file)
	}
	if r, err := filepath.Rel(filepath.Dir(mustAbs(entry)), file); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.Join(filepath.Dir(entry), r)
	}
	return file
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
