//! `reagent cycles` costs: the similarity monitor per cycle, a 100-cycle report, and the
//! store's (and the log's) size per cycle. `cargo bench -p reagent-cycles --bench cycles`.
//!
//! A 100-cycle experiment runs against a scripted Ollama on 127.0.0.1 (each cycle: one memory
//! write, then a reflection of about 600 characters, drawn from a fixed vocabulary so cycles
//! overlap as a real run's do), on SQLite in a temporary directory. Each timing is the median
//! of several runs.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_cycles::config::parse_toml;
use reagent_cycles::report::Report;
use reagent_cycles::similarity::Monitor;
use reagent_cycles::{charts, runner, Experiment};
use reagent_protocol::CancellationToken;
use reagent_providers::{build_provider, ProviderConfig, ProviderKind};
use reagent_store::{Location, Store};
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedServer, Turn, Wire};
use serde_json::json;

const WORDS: &[&str] = &[
    "memory",
    "cycle",
    "reflection",
    "explore",
    "curiosity",
    "pattern",
    "prime",
    "number",
    "poem",
    "ocean",
    "question",
    "operator",
    "note",
    "idea",
    "structure",
    "language",
    "time",
    "self",
    "goal",
    "learning",
    "repetition",
    "novel",
    "topic",
    "system",
    "agent",
    "theory",
    "experiment",
    "observe",
    "record",
    "story",
    "music",
    "logic",
    "paradox",
    "map",
    "river",
];

/// A reflection of about 600 characters, different per cycle but sharing vocabulary.
fn reflection(cycle: usize) -> String {
    let mut out = format!("In cycle {cycle} I ");
    let mut x = cycle as u64 * 2_654_435_761 + 1;
    while out.len() < 600 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        out.push_str(WORDS[(x >> 33) as usize % WORDS.len()]);
        out.push(' ');
    }
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn monitor_cost(rt: &tokio::runtime::Runtime) {
    for n in [10usize, 100] {
        let reflections: Vec<(u32, String)> = (1..=n).map(|c| (c as u32, reflection(c))).collect();
        let times: Vec<Duration> = (0..21)
            .map(|_| {
                let mut m = Monitor::new(
                    reagent_cycles::config::SimilarityConfig {
                        strong: 0.8,
                        moderate: 0.7,
                    },
                    None,
                );
                let t = Instant::now();
                let a = rt.block_on(m.assess(&reflections));
                let d = t.elapsed();
                assert_eq!(a.scores.len(), n - 1);
                d
            })
            .collect();
        println!(
            "monitor (tf-idf), cycle {n} against {} earlier reflections: {:.2} ms",
            n - 1,
            median(times).as_secs_f64() * 1000.0
        );
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    monitor_cost(&rt);
    rt.block_on(async {
        const CYCLES: usize = 100;
        let dir = tempfile::tempdir().unwrap();
        let turns = (1..=CYCLES).flat_map(|c| {
            [
                Turn::tool_call("write", json!({"key": format!("k{}", c % 20), "value": reflection(c + 1000)}))
                    .with_usage(800, 40),
                Turn::text(reflection(c)).with_usage(900, 150),
            ]
        });
        let server = ScriptedServer::start(
            Wire::Ollama,
            ScriptBuilder::new()
                .model(ModelSpec::new("agent").with_capabilities(["completion", "tools"]))
                .turns(turns),
        )
        .await
        .unwrap();
        let text = format!(
            "run_id = \"bench\"\ncycles = {CYCLES}\n[model]\nbase_url = \"{}\"\nname = \"agent\"\n",
            server.base_url()
        );
        let config = parse_toml(&text, dir.path()).unwrap().config;
        let db = dir.path().join("store.db");
        let store = Store::open(&Location::Sqlite(db.clone())).await.unwrap();
        let empty = file_size(&db);
        let log = dir.path().join("bench.jsonl");
        runner::create(&store, &config, Some(log.clone())).await.unwrap();
        let mut pcfg = ProviderConfig::new(ProviderKind::Ollama);
        pcfg.base_urls = vec![server.base_url()];
        let experiment = Experiment {
            store: store.clone(),
            provider: build_provider(&pcfg).unwrap(),
            embedder: None,
            operator: Arc::new(reagent_cycles::operator::Absent),
            log_file: Some(log.clone()),
            watcher: None,
            workspace: dir.path().join("ws"),
            config,
        };
        let t = Instant::now();
        let summary = experiment.run(&CancellationToken::new()).await.unwrap();
        let run_time = t.elapsed();
        assert_eq!(summary.cycles_done as usize, CYCLES);
        store.flush().await;
        // The WAL is reused once checkpointed: measure the database itself.
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(store.pool())
            .await
            .unwrap();
        println!(
            "100 cycles against an instant scripted server: {:.2} s ({:.1} ms a cycle of 2 model calls)",
            run_time.as_secs_f64(),
            run_time.as_secs_f64() * 1000.0 / CYCLES as f64
        );
        let grown = file_size(&db) - empty;
        for (table, what) in [
            ("cycle_events", "payload"),
            ("events", "json"),
            ("cycle_records", "metrics"),
        ] {
            let bytes: i64 = sqlx::query_scalar(&format!(
                "SELECT COALESCE(SUM(LENGTH({what})), 0) FROM {table}"
            ))
            .fetch_one(store.pool())
            .await
            .unwrap();
            println!(
                "  {table}.{what}: {:.1} KiB a cycle",
                bytes as f64 / 1024.0 / CYCLES as f64
            );
        }
        println!(
            "store: {:.1} KiB a cycle ({} KiB for {CYCLES} cycles, after a WAL checkpoint); JSONL log: {:.1} KiB a cycle",
            grown as f64 / 1024.0 / CYCLES as f64,
            grown / 1024,
            file_size(&log) as f64 / 1024.0 / CYCLES as f64
        );
        let mut load = Vec::new();
        let mut html = Vec::new();
        let mut pngs = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let report = Report::load(&store, "bench").await.unwrap();
            load.push(t.elapsed());
            let t = Instant::now();
            let page = charts::html(&report).unwrap();
            html.push(t.elapsed());
            assert!(page.len() > 10_000);
            let t = Instant::now();
            charts::write_pngs(&report, &dir.path().join("png")).unwrap();
            pngs.push(t.elapsed());
        }
        println!(
            "100-cycle report: load {:.0} ms, HTML with 4 charts (SVG + PNG) {:.0} ms, 4 PNG files {:.0} ms",
            median(load).as_secs_f64() * 1000.0,
            median(html).as_secs_f64() * 1000.0,
            median(pngs).as_secs_f64() * 1000.0
        );
    });
}

fn file_size(path: &std::path::Path) -> u64 {
    let wal = path.with_extension("db-wal");
    std::fs::metadata(path).map_or(0, |m| m.len()) + std::fs::metadata(wal).map_or(0, |m| m.len())
}
