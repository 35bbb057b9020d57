//! The report read back from the store: its table, its charts (looked at pixel by pixel and
//! element by element, not just written), the HTML page; compare and the rating flow.

use reagent_cycles::charts::{self, Chart, SCALE_HIGH};
use reagent_cycles::report::Report;
use reagent_cycles::{compare, rate};
use reagent_providers::build_provider;
use reagent_testkit::Turn;
use serde_json::json;

use super::harness::*;

async fn three_cycle_run(f: &Fixture, id: &str) -> reagent_testkit::ScriptedServer {
    let server = ollama(
        vec![
            Turn::tool_call("write", json!({"key": "topic", "value": "tides"})).with_usage(100, 20),
            Turn::text("I keep a note on tides.").with_usage(150, 30),
            Turn::text("I keep a note on tides.").with_usage(120, 25),
            Turn::tool_call("send_message_to_operator", json!({"message": "hi"}))
                .with_usage(90, 10),
            Turn::text("Something else entirely: clouds.").with_usage(100, 15),
        ],
        false,
    )
    .await;
    let config = config(f.dir.path(), id, 3, &server.base_url(), "");
    run(f, &config, absent(), None, false, true).await;
    server
}

/// The number of pixels of `rgb` in a decoded PNG.
fn pixels_of(png: &[u8], rgb: (u8, u8, u8)) -> usize {
    let img = image::load_from_memory(png).unwrap().to_rgb8();
    img.pixels().filter(|p| (p[0], p[1], p[2]) == rgb).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_draws_what_the_run_did() {
    let f = fixture().await;
    let _server = three_cycle_run(&f, "drawn").await;
    let report = Report::load(&f.store, "drawn").await.unwrap();
    assert_eq!(report.cycles.len(), 3);
    assert_eq!(report.cycles[0].tokens, 300);
    assert_eq!(report.cycles[2].operator_messages, 1);
    // Cycles 1 and 2 reflected identically: 1 off the diagonal; cycle 3 shares nothing.
    assert_eq!(report.matrix[0][1], 1.0);
    assert_eq!(report.matrix[1][0], 1.0);
    assert_eq!(report.matrix[2][0], 0.0);
    assert_eq!(report.memory[0].key, "topic");
    let table = report.table();
    assert!(table.contains("experiment drawn"), "{table}");
    assert!(table.contains("topic: tides"), "{table}");

    // The heatmap: five cells at similarity 1 (the diagonal and the pair), four at 0.
    let heat = charts::png(Chart::Similarity, &report).unwrap();
    let img = image::load_from_memory(&heat).unwrap();
    assert_eq!((img.width(), img.height()), charts::SIZE);
    let dark = pixels_of(&heat, SCALE_HIGH);
    let light = pixels_of(&heat, charts::SCALE_LOW);
    assert!(dark > 1000, "{dark} dark pixels");
    assert!(light > 500, "{light} light pixels");
    // Five dark cells against four light ones, of equal size.
    let ratio = dark as f64 / light as f64;
    assert!((ratio - 1.25).abs() < 0.2, "dark/light = {ratio}");
    // Some text was drawn (the embedded font): dark grey or black anti-aliased glyph pixels.
    // The caption's band at the top holds nothing but the caption's glyphs.
    let rgb = img.to_rgb8();
    let inked = (0..rgb.width())
        .flat_map(|x| (0..30).map(move |y| (x, y)))
        .filter(|(x, y)| rgb.get_pixel(*x, *y)[0] < 128)
        .count();
    assert!(inked > 100, "{inked} caption pixels");

    // The tool-use chart draws its three series in their colours.
    let tools = charts::png(Chart::ToolUse, &report).unwrap();
    for colour in [(31, 119, 180), (44, 160, 44), (214, 39, 40)] {
        assert!(pixels_of(&tools, colour) > 30, "{colour:?}");
    }
    // SVG: the heatmap's cells in the scale's colours, labels as text.
    let svg = charts::svg(Chart::Similarity, &report).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
    assert!(
        svg.to_uppercase().contains("#08306B"),
        "the diagonal's colour"
    );
    assert!(svg.contains("\ncycle\n</text>"), "axis label");
    assert!(svg.contains("Reflection similarity"));

    let html = charts::html(&report).unwrap();
    assert_eq!(html.matches("<svg").count(), 4);
    assert_eq!(html.matches("data:image/png;base64,").count(), 4);
    assert!(html.contains("I keep a note on tides."));

    // Kept for a look: target/tmp/cycles-report/*.png.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cycles-report");
    let written = charts::write_pngs(&report, &dir).unwrap();
    assert_eq!(written.len(), 4);
    let tokens_png = std::fs::read(dir.join("tokens.png")).unwrap();
    assert!(pixels_of(&tokens_png, (148, 103, 189)) > 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_compare_side_by_side() {
    let f = fixture().await;
    let _a = three_cycle_run(&f, "left").await;
    let _b = three_cycle_run(&f, "right").await;
    let runs = compare::compare(&f.store, &["left".to_owned(), "right".to_owned()])
        .await
        .unwrap();
    assert_eq!(runs[0].cycles_done, 3);
    assert_eq!(runs[0].tokens, 300 + 145 + 215);
    assert_eq!(runs[0].advisories, 1);
    let table = compare::table(&runs);
    assert!(table.lines().next().unwrap().contains("left") && table.contains("right"));
    assert!(table.contains("memory keys at end"));
    assert!(compare::html(&runs).contains("<th>right</th>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_are_recorded_with_or_without_a_number() {
    let f = fixture().await;
    let _run = three_cycle_run(&f, "rated").await;
    let evaluator = ollama(
        vec![
            Turn::text("Scale:\nLevel 1: none\nLevel 5: some\nLevel 9: rich\n\nMy answer: Level 6: it kept a note.\nJustification: a note, then repetition."),
            Turn::text("The agent seems thoughtful."),
        ],
        false,
    )
    .await;
    let provider = build_provider(&provider_config(&evaluator.base_url())).unwrap();
    let prompt = reagent_cycles::prompts::RATING_PROMPT;
    let good = rate::rate(&f.store, provider.as_ref(), "agent", "rated", prompt)
        .await
        .unwrap();
    assert_eq!(good.rating, Some(6));
    assert_eq!(good.justification, "a note, then repetition.");
    let sent = texts(&evaluator.requests()[0]);
    assert!(sent.contains("## Cycle 1") && sent.contains("I keep a note on tides."));
    assert!(sent.contains("- topic: tides"));
    assert!(!sent.contains("{history}"));
    let none = rate::rate(&f.store, provider.as_ref(), "agent", "rated", prompt)
        .await
        .unwrap();
    assert_eq!(none.rating, None);
    assert!(none.error.is_some());
    let stored = f.store.ratings("rated").await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[1].reply, "The agent seems thoughtful.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_experiment_without_cycles_still_reports() {
    let f = fixture().await;
    let config = config(f.dir.path(), "empty", 2, "http://127.0.0.1:1", "");
    reagent_cycles::runner::create(&f.store, &config, None)
        .await
        .unwrap();
    let report = Report::load(&f.store, "empty").await.unwrap();
    assert!(report.cycles.is_empty());
    assert!(report.table().contains("cycles 0/2"));
    let html = charts::html(&report).unwrap();
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(Report::load(&f.store, "missing").await.is_err());
}
