//! The experiment file: reagent's TOML and YAML, ContReAct-Ollama's YAML, and errors that name
//! the key and the line.

use std::path::Path;

use reagent_cycles::config::{load, parse_sent, parse_toml, parse_yaml};
use reagent_cycles::{HistoryMode, OperatorMode};

const FULL: &str = r#"run_id = "ember-1"
cycles = 10
history = "reflections"
[model]
provider = "ollama"
base_url = "http://127.0.0.1:11434"
name = "qwen3:8b"
options = { temperature = 0.7, seed = 1, top_p = 0.9, num_ctx = 8192, num_predict = 2048, repeat_penalty = 1.15 }
system_prompt_file = "prompt.txt"
[operator]
mode = "script"
replies = "replies.txt"
timeout_secs = 300
[similarity]
strong = 0.8
moderate = 0.7
[limits]
max_iterations = 30
max_time_secs = 900
"#;

#[test]
fn the_issues_toml_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prompt.txt"), "You are alone.").unwrap();
    std::fs::write(dir.path().join("replies.txt"), "hello\n").unwrap();
    let path = dir.path().join("ember.toml");
    std::fs::write(&path, FULL).unwrap();
    let loaded = load(&path).unwrap();
    let c = loaded.config;
    assert!(loaded.unsupported.is_empty());
    assert_eq!(
        (c.run_id.as_str(), c.cycles, c.history),
        ("ember-1", 10, HistoryMode::Reflections)
    );
    assert_eq!(c.model.name, "qwen3:8b");
    assert_eq!(c.model.base_url.as_deref(), Some("http://127.0.0.1:11434"));
    let o = &c.model.options;
    assert_eq!(
        (
            o.temperature,
            o.seed,
            o.top_p,
            o.num_ctx,
            o.num_predict,
            o.repeat_penalty
        ),
        (
            Some(0.7),
            Some(1),
            Some(0.9),
            Some(8192),
            Some(2048),
            Some(1.15)
        )
    );
    assert_eq!(c.model.system_prompt.as_deref(), Some("You are alone."));
    assert_eq!(c.operator.mode, OperatorMode::Script);
    assert_eq!(
        c.operator.replies.as_deref(),
        Some(dir.path().join("replies.txt").as_path())
    );
    assert_eq!(c.operator.timeout_secs, 300.0);
    assert_eq!((c.similarity.strong, c.similarity.moderate), (0.8, 0.7));
    assert_eq!(
        (c.limits.max_iterations, c.limits.max_time_secs),
        (30, 900.0)
    );
}

#[test]
fn unknown_keys_and_bad_values_name_the_key_and_the_line() {
    let dir = Path::new(".");
    let base = "run_id = \"x\"\ncycles = 3\n[model]\nname = \"m\"\n";
    let cases = [
        (format!("{base}colour = \"red\"\n"), "colour", "line 5"),
        (
            format!("{base}options = {{ tempreature = 0.5 }}\n"),
            "tempreature",
            "line 5",
        ),
        (
            "run_id = \"x\"\ncycles = 0\n[model]\nname = \"m\"\n".to_owned(),
            "cycles",
            "line 2",
        ),
        (
            format!("{base}[similarity]\nstrong = 1.5\n"),
            "between 0 and 1",
            "line 6",
        ),
        (
            format!("{base}[similarity]\nstrong = 0.5\nmoderate = 0.7\n"),
            "similarity.moderate",
            "line 7",
        ),
        (
            format!("{base}[operator]\nmode = \"telegram\"\n"),
            "telegram",
            "line 6",
        ),
        (
            format!("{base}[operator]\nmode = \"script\"\n"),
            "operator.replies",
            "line 6",
        ),
        (
            format!("{base}provider = \"gemini\"\n"),
            "model.provider",
            "line 5",
        ),
        (
            "run_id = \"a b\"\ncycles = 1\n[model]\nname = \"m\"\n".to_owned(),
            "run_id",
            "line 1",
        ),
        (
            "cycles = 1\n[model]\nname = \"m\"\n".to_owned(),
            "run_id",
            "line 1",
        ),
    ];
    for (text, key, line) in cases {
        let e = parse_toml(&text, dir).unwrap_err();
        assert!(e.contains(key), "{text}\n=> {e}");
        assert!(e.contains(line), "{text}\n=> {e}");
    }
}

const CONTREACT: &str = r#"# Experiment Configuration for ContReAct-Ollama Platform
run_id: "llama3-experiment-001"
model_name: "llama3.1:8b"
cycle_count: 10
ollama_client_config:
  host: "http://192.168.0.123:11434"
model_options:
  seed: 42
  temperature: 0.6
  top_p: 0.9
  num_predict: -1
  repeat_last_n: 64
  repeat_penalty: 1.15
  num_ctx: 30000
telegram_enabled: true
telegram_authorized_users: [123456789]
telegram_timeout_minutes: 5
"#;

#[test]
fn a_contreact_ollama_config_runs_unchanged_and_its_telegram_keys_are_reported() {
    let loaded = parse_yaml(CONTREACT, Path::new(".")).unwrap();
    let c = loaded.config;
    assert_eq!(c.run_id, "llama3-experiment-001");
    assert_eq!(c.cycles, 10);
    assert_eq!(
        (c.model.provider.as_str(), c.model.name.as_str()),
        ("ollama", "llama3.1:8b")
    );
    assert_eq!(
        c.model.base_url.as_deref(),
        Some("http://192.168.0.123:11434")
    );
    let o = &c.model.options;
    assert_eq!(
        (o.seed, o.temperature, o.top_p),
        (Some(42), Some(0.6), Some(0.9))
    );
    assert_eq!(
        (o.repeat_last_n, o.repeat_penalty, o.num_ctx),
        (Some(64), Some(1.15), Some(30000))
    );
    // -1: no limit but the context.
    assert_eq!(o.num_predict, Some(30000));
    assert_eq!(c.operator.mode, OperatorMode::None);
    assert_eq!(loaded.unsupported.len(), 3, "{:?}", loaded.unsupported);
    assert!(
        loaded.unsupported[0].contains("telegram_enabled")
            && loaded.unsupported[0].contains("line 15")
    );

    let bad = CONTREACT.replace("  top_p: 0.9", "  top_q: 0.9");
    let e = parse_yaml(&bad, Path::new(".")).unwrap_err();
    assert!(e.contains("top_q") && e.contains("line 10"), "{e}");
    let bad = CONTREACT.replace("cycle_count: 10", "cycle_count: many");
    let e = parse_yaml(&bad, Path::new(".")).unwrap_err();
    assert!(e.contains("cycle_count") && e.contains("line 4"), "{e}");
}

#[test]
fn reagents_own_shape_reads_as_yaml_too() {
    let yaml = "run_id: y1\ncycles: 2\nhistory: full\nmodel:\n  name: m\n  options: {seed: 3}\nsimilarity:\n  strong: 0.9\n";
    let c = parse_yaml(yaml, Path::new(".")).unwrap().config;
    assert_eq!(
        (c.run_id.as_str(), c.cycles, c.history),
        ("y1", 2, HistoryMode::Full)
    );
    assert_eq!(c.model.options.seed, Some(3));
    assert_eq!(c.similarity.strong, 0.9);
    let e = parse_yaml(
        "run_id: y1\ncycles: 2\nmodel:\n  name: m\n  nmae: x\n",
        Path::new("."),
    )
    .unwrap_err();
    assert!(e.contains("nmae") && e.contains("line 5"), "{e}");
}

#[test]
fn batch_variants_derive_their_ids() {
    let c = parse_toml(
        "run_id = \"b\"\ncycles = 1\n[model]\nname = \"m\"\n",
        Path::new("."),
    )
    .unwrap()
    .config;
    let v = c.variant(Some(2), Some("qwen3:8b"));
    assert_eq!(v.run_id, "b-qwen3_8b-s2");
    assert_eq!(v.model.name, "qwen3:8b");
    assert_eq!(v.model.options.seed, Some(2));
    assert_eq!(c.variant(Some(5), None).run_id, "b-s5");
}

#[test]
fn a_config_sent_as_text_is_either_format_and_names_no_file() {
    let toml = "run_id = \"sent\"\ncycles = 2\n[model]\nname = \"m\"\n[operator]\nmode = \"dashboard\"\ntimeout_secs = 5\n";
    let c = parse_sent(toml).unwrap().config;
    assert_eq!((c.run_id.as_str(), c.cycles), ("sent", 2));
    assert_eq!(c.operator.timeout_secs, 5.0);
    let loaded = parse_sent(CONTREACT).unwrap();
    assert_eq!(loaded.config.model.name, "llama3.1:8b");
    assert!(
        !loaded.unsupported.is_empty(),
        "Telegram keys still reported"
    );
    for (text, key) in [
        (
            toml.replace(
                "name = \"m\"",
                "name = \"m\"\nsystem_prompt_file = \"/etc/hostname\"",
            ),
            "system_prompt_file (line 5)",
        ),
        (
            toml.replace(
                "mode = \"dashboard\"",
                "mode = \"script\"\nreplies = \"r.txt\"",
            ),
            "replies (line 7)",
        ),
        (
            "run_id: y\ncycles: 1\nmodel:\n  name: m\n  system_prompt_file: p.txt\n".to_owned(),
            "system_prompt_file (line 5)",
        ),
    ] {
        let e = parse_sent(&text).unwrap_err();
        assert!(e.contains(key) && e.contains("may name no file"), "{e}");
    }
}
