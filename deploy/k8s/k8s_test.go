// Package k8s holds the Kubernetes manifests of a linkbench driver fleet;
// this test validates them at the schema level, as no cluster is at hand.
package k8s

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/linkbench/linkbench/internal/config"
)

// The parts of the Kubernetes objects the test looks at.
type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		AccessModes    []string
		Template       struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy string      `yaml:"restartPolicy"`
	Containers    []container `yaml:"containers"`
	Volumes       []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
		PersistentVolumeClaim *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
	} `yaml:"volumes"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

func readManifests(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var objs []object
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(false)
		for {
			var o object
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Fatalf("%s: an object without apiVersion, kind or metadata.name", f)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

var shardArg = regexp.MustCompile(`^\$\(JOB_COMPLETION_INDEX\)/(\d+)$`)
var varRef = regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`)

const indexField = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

func TestManifests(t *testing.T) {
	objs := readManifests(t)
	configMaps := map[string]map[string]string{}
	claims := map[string]bool{}
	for _, o := range objs {
		switch o.Kind {
		case "ConfigMap":
			configMaps[o.Metadata.Name] = o.Data
		case "PersistentVolumeClaim":
			claims[o.Metadata.Name] = true
		}
	}
	jobs := map[string]object{}
	for _, o := range objs {
		if o.Kind != "Job" {
			continue
		}
		jobs[o.Metadata.Name] = o
		name := o.Metadata.Name
		if o.APIVersion != "batch/v1" {
			t.Errorf("%s: apiVersion %q, want batch/v1", name, o.APIVersion)
		}
		pod := o.Spec.Template.Spec
		if pod.RestartPolicy != "Never" && pod.RestartPolicy != "OnFailure" {
			t.Errorf("%s: restartPolicy %q; a Job needs Never or OnFailure", name, pod.RestartPolicy)
		}
		volumes := map[string]bool{}
		mountedConfig := map[string]string{} // mount path -> ConfigMap
		for _, v := range pod.Volumes {
			volumes[v.Name] = true
			if v.ConfigMap != nil && configMaps[v.ConfigMap.Name] == nil {
				t.Errorf("%s: volume %s names ConfigMap %q, which no manifest defines", name, v.Name, v.ConfigMap.Name)
			}
			if v.PersistentVolumeClaim != nil && !claims[v.PersistentVolumeClaim.ClaimName] {
				t.Errorf("%s: volume %s names claim %q, which no manifest defines", name, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
		if len(pod.Containers) == 0 {
			t.Fatalf("%s: no containers", name)
		}
		for _, c := range pod.Containers {
			if c.Image == "" || len(c.Command) == 0 || len(c.Args) == 0 {
				t.Errorf("%s/%s: image, command and args are required", name, c.Name)
			}
			env := map[string]bool{}
			for _, e := range c.Env {
				env[e.Name] = true
				if e.Name == "JOB_COMPLETION_INDEX" && (e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != indexField) {
					t.Errorf("%s: JOB_COMPLETION_INDEX must come from the field %s", name, indexField)
				}
			}
			for _, m := range c.VolumeMounts {
				if !volumes[m.Name] {
					t.Errorf("%s: mount of undeclared volume %q", name, m.Name)
				}
				for _, v := range pod.Volumes {
					if v.Name == m.Name && v.ConfigMap != nil {
						mountedConfig[m.MountPath] = v.ConfigMap.Name
					}
				}
			}
			for _, a := range c.Args {
				for _, m := range varRef.FindAllStringSubmatch(a, -1) {
					if !env[m[1]] {
						t.Errorf("%s: argument %q uses $(%s), which the container does not declare (Kubernetes would pass it literally)", name, a, m[1])
					}
				}
			}
			checkShardWiring(t, o, c)
			checkConfigArg(t, name, c, mountedConfig, configMaps)
		}
	}
	for _, want := range []string{"linkbench-load", "linkbench-finish", "linkbench-run", "linkbench-merge"} {
		if _, ok := jobs[want]; !ok {
			t.Errorf("no Job %s", want)
		}
	}
	// The finish runs load --finish with the load pods' config: a
	// --finish with other settings is refused.
	load, finish := jobs["linkbench-load"], jobs["linkbench-finish"]
	if len(load.Spec.Template.Spec.Containers) > 0 && len(finish.Spec.Template.Spec.Containers) > 0 {
		la, fa := load.Spec.Template.Spec.Containers[0].Args, finish.Spec.Template.Spec.Containers[0].Args
		if len(fa) < 2 || fa[0] != "load" || fa[1] != "--finish" || argAfter(fa, "-c") != argAfter(la, "-c") {
			t.Errorf("finish args %q: want load --finish with the load pods' -c %s", fa, argAfter(la, "-c"))
		}
	}
	// The merge reads the directory the run pods write their bundles under.
	run, merge := jobs["linkbench-run"], jobs["linkbench-merge"]
	if len(run.Spec.Template.Spec.Containers) > 0 && len(merge.Spec.Template.Spec.Containers) > 0 {
		runDir := argAfter(run.Spec.Template.Spec.Containers[0].Args, "--results-dir")
		mergeArgs := merge.Spec.Template.Spec.Containers[0].Args
		if len(mergeArgs) < 3 || mergeArgs[0] != "report" || mergeArgs[1] != "--merge" || !strings.HasPrefix(runDir, mergeArgs[2]+"/") {
			t.Errorf("merge args %q do not read the run pods' results (%s)", mergeArgs, runDir)
		}
	}
}

// checkShardWiring: a --shard I/N pod belongs to an Indexed Job of N
// completions run all at once.
func checkShardWiring(t *testing.T, o object, c container) {
	t.Helper()
	v := argAfter(c.Args, "--shard")
	if v == "" {
		return
	}
	m := shardArg.FindStringSubmatch(v)
	if m == nil {
		t.Errorf("%s: --shard %q; want $(JOB_COMPLETION_INDEX)/N", o.Metadata.Name, v)
		return
	}
	n, _ := strconv.Atoi(m[1])
	if o.Spec.CompletionMode != "Indexed" {
		t.Errorf("%s: --shard needs completionMode: Indexed", o.Metadata.Name)
	}
	if o.Spec.Completions == nil || *o.Spec.Completions != n || o.Spec.Parallelism == nil || *o.Spec.Parallelism != n {
		t.Errorf("%s: --shard .../%d needs completions and parallelism %d", o.Metadata.Name, n, n)
	}
}

// checkConfigArg: -c names a file of a mounted ConfigMap, and that file
// is a valid linkbench config (shard loads need a fixed seed and time).
func checkConfigArg(t *testing.T, name string, c container, mounted map[string]string, maps map[string]map[string]string) {
	t.Helper()
	path := argAfter(c.Args, "-c")
	if path == "" {
		return
	}
	cm, ok := mounted[filepath.Dir(path)]
	if !ok {
		t.Errorf("%s: -c %s is not in a mounted ConfigMap", name, path)
		return
	}
	text, ok := maps[cm][filepath.Base(path)]
	if !ok {
		t.Errorf("%s: ConfigMap %s has no key %s", name, cm, filepath.Base(path))
		return
	}
	// The image keeps the shipped configs in /etc/linkbench.
	repoConfig, _ := filepath.Abs(filepath.Join("..", "..", "config"))
	text = strings.ReplaceAll(text, "/etc/linkbench", repoConfig)
	f := filepath.Join(t.TempDir(), "linkbench.properties")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LINKBENCH_PASSWORD", "x")
	cfg, _, err := config.Load(config.Source{ConfigFile: f, Strict: true})
	if err != nil {
		t.Errorf("%s: the config in ConfigMap %s: %v", name, cm, err)
		return
	}
	for _, k := range []string{"load_random_seed", "load_time_ms"} {
		if e, ok := cfg.Props.Lookup(k); !ok || e.Origin < config.FromMain {
			t.Errorf("%s: the config must fix %s, or the load shards generate different graphs", name, k)
		}
	}
}

func argAfter(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}
