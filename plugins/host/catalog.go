package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// Manifest describes one installed plugin; it is stored as <class>.json
// beside the binary.
type Manifest struct {
	Name             string              `json:"name"` // the connector class
	Version          string              `json:"version"`
	Type             sdk.Type            `json:"type"`
	Binary           string              `json:"binary"` // file name in Dir
	SHA256           string              `json:"sha256"` // hex
	ProtocolVersions []int               `json:"protocol_versions"`
	Summary          string              `json:"summary"`
	Config           []configdef.KeyInfo `json:"config"`
	// Dir is the plugin.path directory holding the manifest (not stored).
	Dir string `json:"-"`
	// file is the manifest's file name in Dir.
	file string
}

// Path is the binary's path.
func (m Manifest) Path() string { return filepath.Join(m.Dir, m.Binary) }

// Catalog manages installed plugins in plugin.path directories. Install
// writes into the first directory; lookups search them in order.
type Catalog struct {
	dirs []string
}

// OpenCatalog opens plugin.path. The first directory is created if missing.
func OpenCatalog(dirs ...string) (*Catalog, error) {
	if len(dirs) == 0 {
		return nil, errors.New("plugin catalog: no plugin.path directory given")
	}
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("plugin catalog: %w", err)
		}
		abs[i] = a
	}
	if err := os.MkdirAll(abs[0], 0o755); err != nil {
		return nil, fmt.Errorf("plugin catalog: %w", err)
	}
	return &Catalog{dirs: abs}, nil
}

// PathError is a plugin.path directory a worker cannot use.
type PathError struct {
	Dir string // as configured
	Err error
}

func (e *PathError) Error() string {
	switch {
	case errors.Is(e.Err, os.ErrNotExist):
		return fmt.Sprintf("plugin.path directory %s does not exist (create it with connectd plugin install --plugin-path %s, or correct plugin.path)", e.Dir, e.Dir)
	case errors.Is(e.Err, errNotDir):
		return fmt.Sprintf("plugin.path entry %s is not a directory", e.Dir)
	}
	return fmt.Sprintf("plugin.path directory %s cannot be read: %v", e.Dir, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

var errNotDir = errors.New("not a directory")

// OpenInstalled opens plugin.path for a worker: unlike OpenCatalog it
// creates nothing, and every directory must exist and be readable (a
// *PathError names the first that is not), so that a mistyped plugin.path
// stops the worker instead of leaving it with no plugins.
func OpenInstalled(dirs ...string) (*Catalog, error) {
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			return nil, &PathError{Dir: d, Err: err}
		}
		if !st.IsDir() {
			return nil, &PathError{Dir: d, Err: errNotDir}
		}
		f, err := os.Open(d)
		if err == nil {
			_, err = f.ReadDir(1)
			f.Close()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &PathError{Dir: d, Err: err}
		}
	}
	return OpenCatalog(dirs...)
}

// Dirs returns the catalog's directories.
func (c *Catalog) Dirs() []string { return slices.Clone(c.dirs) }

// InstallOptions bound the probe of a binary being installed.
type InstallOptions struct {
	// HandshakeTimeout bounds the probe's start (default
	// DefaultHandshakeTimeout): a binary that is not a plugin, or one
	// that hangs before serving, is killed with its whole process group.
	HandshakeTimeout time.Duration
	// CallTimeout bounds the spec call (default 30 s).
	CallTimeout time.Duration
}

// Install is InstallWith with the default bounds.
func (c *Catalog) Install(ctx context.Context, binaryPath string) (Manifest, error) {
	return c.InstallWith(ctx, binaryPath, InstallOptions{})
}

// InstallWith verifies that binaryPath is a connectd plugin by launching
// it and asking for its spec over the real protocol, then copies it into
// the first plugin.path directory and writes its manifest. Installing a
// class again replaces it.
func (c *Catalog) InstallWith(ctx context.Context, binaryPath string, opts InstallOptions) (Manifest, error) {
	sum, err := fileSHA256(binaryPath)
	if err != nil {
		return Manifest{}, fmt.Errorf("install %s: %w", binaryPath, err)
	}
	abs, err := filepath.Abs(binaryPath)
	if err != nil {
		return Manifest{}, err
	}
	probe := Manifest{Name: filepath.Base(abs), Dir: filepath.Dir(abs), Binary: filepath.Base(abs), SHA256: sum}
	proc, err := Launch(ctx, probe, LaunchOptions{Logger: slog.New(slog.DiscardHandler),
		HandshakeTimeout: opts.HandshakeTimeout, CallTimeout: opts.CallTimeout})
	if err != nil {
		return Manifest{}, fmt.Errorf("install %s: not a working connectd plugin: %w", binaryPath, err)
	}
	spec, versions, err := proc.spec(ctx)
	_ = proc.Close(ctx)
	if err != nil {
		return Manifest{}, fmt.Errorf("install %s: spec handshake: %w", binaryPath, err)
	}
	// A plugin that does not speak SharedProtocol is refused
	// (*ProtocolVersionError): a worker runs several connectors per process.
	if !slices.Contains(versions, SharedProtocol) {
		return Manifest{}, fmt.Errorf("install %s: %w", binaryPath, &ProtocolVersionError{Plugin: spec.Class, Versions: versions})
	}
	if err := checkClass(spec.Class); err != nil {
		return Manifest{}, fmt.Errorf("install %s: %w", binaryPath, err)
	}
	if err := checkVersion(spec.Version); err != nil {
		return Manifest{}, fmt.Errorf("install %s: %w", binaryPath, err)
	}
	m := Manifest{
		Name: spec.Class, Version: spec.Version, Type: spec.Type, Binary: versionedName(probe.Binary, spec.Version),
		SHA256: sum, ProtocolVersions: versions, Summary: spec.Summary,
		Config: spec.Config, Dir: c.dirs[0],
	}
	// Another class must not own a binary of the same file name.
	others, err := c.list(c.dirs[0])
	if err != nil {
		return Manifest{}, fmt.Errorf("install %s: %w", binaryPath, err)
	}
	for _, o := range others {
		if o.Binary == m.Binary && o.Name != m.Name {
			return Manifest{}, fmt.Errorf("install %s: file name %q is already used by plugin %s; rename the binary", binaryPath, m.Binary, o.Name)
		}
	}
	if filepath.Clean(abs) != filepath.Clean(m.Path()) {
		if err := copyFile(abs, m.Path()); err != nil {
			return Manifest{}, fmt.Errorf("install %s: %w", binaryPath, err)
		}
	}
	// The copy must be what we verified.
	if got, err := fileSHA256(m.Path()); err != nil || got != sum {
		return Manifest{}, fmt.Errorf("install %s: the copy at %s does not match the verified binary (%v)", binaryPath, m.Path(), err)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	if err := writeFileAtomic(filepath.Join(c.dirs[0], manifestName(m.Name, m.Version)), append(data, '\n'), 0o644); err != nil {
		return Manifest{}, fmt.Errorf("install %s: %w", binaryPath, err)
	}
	// The same version installed before versions were kept side by side
	// (as <class>.json) is replaced by this one.
	for _, o := range others {
		if o.Name == m.Name && o.Version == m.Version && o.file != manifestName(m.Name, m.Version) {
			_ = os.Remove(filepath.Join(o.Dir, o.file))
			if o.Binary != m.Binary {
				_ = os.Remove(o.Path())
			}
		}
	}
	return m, nil
}

// manifestName is the manifest file of one version of a class. Versions
// of a class live side by side (KIP-891), each with its own manifest and
// binary; a plugin without a version keeps the plain <class>.json.
func manifestName(class, version string) string {
	return versionedName(class, version) + ".json"
}

func versionedName(name, version string) string {
	if version == "" {
		return name
	}
	return name + "@" + version
}

// checkVersion keeps versions usable in file names.
func checkVersion(v string) error {
	if v != strings.TrimSpace(v) || strings.HasPrefix(v, ".") || strings.ContainsAny(v, "/\\@ ") || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 }) {
		return fmt.Errorf("plugin version %q cannot be installed: it must not contain /, \\, @, spaces or start with a dot", v)
	}
	return nil
}

// List returns every installed plugin version, ordered by class and then
// version. A version of a class installed in two directories is listed
// once, from the first (the later copy is shadowed).
func (c *Catalog) List() ([]Manifest, error) {
	type key struct{ name, version string }
	seen := map[key]bool{}
	var out []Manifest
	for _, d := range c.dirs {
		ms, err := c.list(d)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			k := key{m.Name, m.Version}
			if !seen[k] {
				seen[k] = true
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b Manifest) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return CompareVersions(a.Version, b.Version)
	})
	return out, nil
}

func (c *Catalog) list(dir string) ([]Manifest, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plugin catalog: %w", err)
	}
	var out []Manifest
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		m, err := readManifest(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func readManifest(path string) (Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("plugin catalog: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("plugin catalog: manifest %s: %w", path, err)
	}
	if m.Name == "" || m.Binary == "" || len(m.SHA256) != 64 || filepath.Base(m.Binary) != m.Binary {
		return Manifest{}, fmt.Errorf("plugin catalog: manifest %s: needs name, a plain binary file name and a hex sha256", path)
	}
	m.Dir, m.file = filepath.Dir(path), filepath.Base(path)
	return m, nil
}

// Lookup returns the manifest of the highest installed version of class;
// errors.Is(err, ErrUnknownPlugin) when none is installed.
func (c *Catalog) Lookup(class string) (Manifest, error) {
	return c.LookupVersion(class, VersionRange{})
}

// Versions returns the installed versions of class, lowest first
// (ErrUnknownPlugin when there is none).
func (c *Catalog) Versions(class string) ([]Manifest, error) {
	if checkClass(class) != nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPlugin, class)
	}
	all, err := c.List()
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, m := range all {
		if m.Name == class {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no plugin with class %q in plugin.path %s", ErrUnknownPlugin, class, strings.Join(c.dirs, ":"))
	}
	return out, nil
}

// VersionError is a version requirement that no installed version of a
// class satisfies; it names the versions that are installed.
type VersionError struct {
	Class     string
	Range     string   // as given
	Installed []string // lowest first
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("Plugin %s not found that matches the version range %s, available versions: %s",
		e.Class, e.Range, strings.Join(e.Installed, ", "))
}

// Unwrap makes errors.Is(err, ErrNoMatchingVersion) true.
func (e *VersionError) Unwrap() error { return ErrNoMatchingVersion }

// LookupVersion returns the manifest of the highest installed version of
// class that satisfies r: ErrUnknownPlugin when the class is not
// installed, a *VersionError (ErrNoMatchingVersion) when no version fits.
func (c *Catalog) LookupVersion(class string, r VersionRange) (Manifest, error) {
	ms, err := c.Versions(class)
	if err != nil {
		return Manifest{}, err
	}
	for i := len(ms) - 1; i >= 0; i-- {
		if r.Contains(ms[i].Version) {
			return ms[i], nil
		}
	}
	installed := make([]string, len(ms))
	for i, m := range ms {
		installed[i] = m.Version
	}
	return Manifest{}, &VersionError{Class: class, Range: r.String(), Installed: installed}
}

// Remove deletes every installed version of class.
func (c *Catalog) Remove(class string) error {
	ms, err := c.Versions(class)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := c.remove(m); err != nil {
			return err
		}
	}
	return nil
}

// RemoveVersion deletes one installed version of class.
func (c *Catalog) RemoveVersion(class, version string) error {
	ms, err := c.Versions(class)
	if err != nil {
		return err
	}
	var installed []string
	for _, m := range ms {
		if m.Version == version {
			return c.remove(m)
		}
		installed = append(installed, m.Version)
	}
	return &VersionError{Class: class, Range: "[" + version + "]", Installed: installed}
}

func (c *Catalog) remove(m Manifest) error {
	if err := os.Remove(filepath.Join(m.Dir, m.file)); err != nil {
		return fmt.Errorf("remove plugin %s %s: %w", m.Name, m.Version, err)
	}
	if err := os.Remove(m.Path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove plugin %s %s: %w", m.Name, m.Version, err)
	}
	return nil
}

// checkClass keeps class names usable as file names.
func checkClass(class string) error {
	if class == "" || class != filepath.Base(class) || strings.HasPrefix(class, ".") || strings.ContainsAny(class, `/\`) {
		return fmt.Errorf("invalid connector class %q", class)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".install-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".manifest-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
