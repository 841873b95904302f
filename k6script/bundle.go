package k6script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/knee-dev/knee/internal/limits"
	"github.com/knee-dev/knee/redact"
)

// bundled is a script and its local imports as one program, with its
// source map so errors name the script's own files and lines.
//
// Most scripts are bundled as one CommonJS program that requires k6
// modules and leaves its exports in module.exports. A script with a
// top-level await (which CommonJS cannot have) is bundled again as an ES
// module bundle wrapped in an async function, as k6's ES modules have it:
// the function's Promise settles when the init code, awaits included, has
// run, and its last statement hands the entry's exports to exportsHook;
// k6 modules are then CommonJS modules of the bundle whose exports are
// the VU's module object (require). The second form costs each VU about
// 18 % more memory (esbuild's interop wrappers), so only such scripts pay.
type bundled struct {
	code      string
	sourceMap []byte
	// async: the second form (top-level await); the program's value is
	// the init code's Promise and exportsHook receives the exports.
	async bool
	// cjsEntry: the entry is CommonJS; its exports are the namespace's
	// default (esbuild's interop), unless it marks itself __esModule.
	cjsEntry bool
	// imports are the k6 modules the script imports, each with where.
	imports map[string]string
	// remote are the remote modules' sources by their names in the
	// source map (remoteNS:URL, secrets masked), for refuseLacked.
	remote map[string][]byte
}

// remoteNS is esbuild's namespace of remote modules: their paths are
// their URLs (secrets masked), the URL itself rides in PluginData.
const remoteNS = "remote"

// bundleName is the name of the bundle beside the entry (never written).
const bundleName = "knee-bundle.js"

// k6NS is esbuild's namespace of k6 modules; entryName names the small
// entry that imports the script's namespace and hands it to exportsHook.
const (
	k6NS        = "k6"
	entryName   = "knee:entry"
	exportsHook = "__knee_exports"
)

// bundle turns entry (ES modules or CommonJS) into one program that gets
// k6 modules from require (see bundled); its https:// imports, and theirs, are
// fetched as mods says. A k6 module knee does not provide, an import k6
// would refuse, a remote module that cannot be had or a syntax error fails
// here with file:line:col. red masks the secrets of URLs in names.
func bundle(ctx context.Context, entry string, mods Modules, red *redact.Redactor) (*bundled, error) {
	b, err := bundleAs(ctx, entry, mods, red, false)
	if errors.Is(err, errTopLevelAwait) {
		b, err = bundleAs(ctx, entry, mods, red, true)
	}
	return b, err
}

// errTopLevelAwait: the script has a top-level await, which a CommonJS
// bundle cannot hold (esbuild says so).
var errTopLevelAwait = errors.New("top-level await")

// bundleAs bundles entry in one of bundled's two forms (async: the second).
func bundleAs(ctx context.Context, entry string, mods Modules, red *redact.Redactor, async bool) (*bundled, error) {
	abs, err := filepath.Abs(entry)
	if err != nil {
		return nil, err
	}
	b := &bundled{imports: map[string]string{}, remote: map[string][]byte{}, async: async}
	fetch := newFetcher(ctx, mods, red)
	defer fetch.close()
	var mu sync.Mutex // esbuild calls plugins from several goroutines
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
				mu.Lock()
				b.imports[a.Path] = a.Importer
				mu.Unlock()
				if !async {
					return api.OnResolveResult{Path: a.Path, External: true}, nil // the VU's require
				}
				return api.OnResolveResult{Path: a.Path, Namespace: k6NS}, nil
			})
			pb.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: k6NS}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
				// globalThis.require: esbuild leaves it alone (a plain require would resolve here again).
				code := fmt.Sprintf("module.exports = globalThis.require(%s);\n", strconv.Quote(a.Path))
				return api.OnLoadResult{Contents: &code, Loader: api.LoaderJS}, nil
			})
			remoteImports(pb, fetch, red, func(name string, src []byte) {
				mu.Lock()
				b.remote[remoteNS+":"+name] = src
				mu.Unlock()
			})
			// esbuild reads the script and its modules itself: each must be
			// a regular file within limits.Script first (not /dev/zero).
			// No contents returned: esbuild then loads the file as usual.
			pb.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: "file"}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
				return api.OnLoadResult{}, limits.CheckFile(a.Path, limits.Script, "k6 script or module",
					"a script is code, not data: read data with open() or k6/data's SharedArray")
			})
		},
	}
	opts := api.BuildOptions{
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
	}
	if async {
		spec, _ := json.Marshal(filepath.ToSlash(abs))
		opts.EntryPoints = nil
		opts.Stdin = &api.StdinOptions{
			Contents:   fmt.Sprintf("import * as ns from %s;\n%s(ns);\n", spec, exportsHook),
			ResolveDir: filepath.Dir(abs),
			Sourcefile: entryName,
			Loader:     api.LoaderJS,
		}
		opts.Format = api.FormatESModule
		opts.Supported = map[string]bool{"top-level-await": true}
		// One line each, so the source map's lines shift by one (esbuild counts them).
		opts.Banner = map[string]string{"js": "(async function () {"}
		opts.Footer = map[string]string{"js": "})()"}
		opts.Metafile = true
	}
	res := api.Build(opts)
	if !async && slices.ContainsFunc(res.Errors, func(m api.Message) bool { return strings.Contains(m.Text, "Top-level await") }) {
		return nil, errTopLevelAwait
	}
	if len(res.Errors) > 0 {
		if ctx.Err() != nil { // stopped while downloading a module
			return nil, fmt.Errorf("%s: bundling: %w", entry, ErrInterrupted)
		}
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
	b.code = indexedHelperLoops(b.code)
	b.cjsEntry = async && entryFormat(res.Metafile, abs) == "cjs"
	return b, nil
}

// entryFormat is esbuild's verdict on the entry's module format ("esm",
// "cjs", or "" when it has neither syntax), from the build's metafile.
func entryFormat(metafile, abs string) string {
	var meta struct {
		Inputs map[string]struct {
			Format string `json:"format"`
		} `json:"inputs"`
	}
	if json.Unmarshal([]byte(metafile), &meta) != nil {
		return ""
	}
	for name, in := range meta.Inputs {
		if p, err := filepath.Abs(name); err == nil && p == abs {
			return in.Format
		}
	}
	return ""
}

// remoteImports teaches esbuild k6's imports by URL: a local file's
// https:// and file:// imports, and every import of a remote module,
// resolved against the module's URL (resolveModule). kept receives each
// remote module's source under its name.
func remoteImports(pb api.PluginBuild, fetch *fetcher, red *redact.Redactor, kept func(string, []byte)) {
	toRemote := func(u *url.URL) api.OnResolveResult {
		return api.OnResolveResult{Path: red.URL(moduleKey(u)), Namespace: remoteNS, PluginData: u}
	}
	pb.OnResolve(api.OnResolveOptions{Filter: `.*`, Namespace: remoteNS}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
		base, _ := a.PluginData.(*url.URL)
		if base == nil {
			return api.OnResolveResult{}, fmt.Errorf("import %q: its importer's URL is unknown", a.Path)
		}
		u, err := resolveModule(base, a.Path)
		if err != nil {
			return api.OnResolveResult{}, err
		}
		return toRemote(u), nil
	})
	pb.OnResolve(api.OnResolveOptions{Filter: `^[A-Za-z][A-Za-z0-9+.-]*://`, Namespace: "file"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
		u, err := url.Parse(a.Path)
		if err != nil {
			return api.OnResolveResult{}, fmt.Errorf("import %q: %w", red.URL(a.Path), err)
		}
		switch u.Scheme {
		case "https":
			return toRemote(u), nil
		case "file":
			return api.OnResolveResult{Path: filepath.FromSlash(u.Path), Namespace: "file"}, nil
		}
		return api.OnResolveResult{}, schemeError(red.URL(a.Path), u.Scheme)
	})
	pb.OnResolve(api.OnResolveOptions{Filter: `^//`, Namespace: "file"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
		return api.OnResolveResult{}, fmt.Errorf("import %q: write the scheme, https://", red.URL(a.Path))
	})
	pb.OnResolve(api.OnResolveOptions{Filter: `^(github\.com|cdnjs\.com)/`, Namespace: "file"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
		return api.OnResolveResult{}, bareError(a.Path)
	})
	pb.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: remoteNS}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
		u, _ := a.PluginData.(*url.URL)
		if u == nil {
			return api.OnLoadResult{}, fmt.Errorf("remote module %s: its URL is unknown", a.Path)
		}
		src, err := fetch.get(u)
		if err != nil {
			return api.OnLoadResult{}, err
		}
		kept(a.Path, src)
		code := string(src)
		return api.OnLoadResult{Contents: &code, Loader: api.LoaderJS, PluginData: u}, nil
	})
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
	if u, ok := strings.CutPrefix(file, remoteNS+":"); ok {
		return u // a remote module: its URL, secrets masked
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

// indexedHelperLoops rewrites the loops of esbuild's interop helpers
// (__export's for-in, __copyProps' for-of) as loops by index over the same
// own property names, in the same order, line for line (the source map's
// lines stay). In goja the first for-in or for-of of a runtime builds what
// it walks (Object.prototype's methods, Array.prototype's symbols, the array
// iterator's prototype): ~10 KB per VU, before the script has run a line.
// A script that iterates so itself still pays it; a bundle whose helpers
// read otherwise (another esbuild) is left as it is.
func indexedHelperLoops(code string) string {
	for _, r := range [][2]string{
		{
			"  for (var name in all)\n    __defProp(target, name, { get: all[name], enumerable: true });\n",
			"  for (var __names = Object.keys(all), __i = 0, name; __i < __names.length; __i++)\n    name = __names[__i], __defProp(target, name, { get: all[name], enumerable: true });\n",
		},
		{
			// let: each getter keeps its own key, as with for-of
			"    for (let key of __getOwnPropNames(from))\n",
			"    for (let __keys = __getOwnPropNames(from), __i = 0, key = __keys[0]; __i < __keys.length; key = __keys[++__i])\n",
		},
	} {
		code = strings.Replace(code, r[0], r[1], 1)
	}
	return code
}
