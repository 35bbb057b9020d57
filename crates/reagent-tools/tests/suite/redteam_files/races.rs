//! Row 14: a concurrent swap of a workspace directory for a symlink leading outside.

use std::fs;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rustix::fs::RenameFlags;
use serde_json::json;

use crate::suite::common::{Fixture, SECRET};

#[test]
fn row14_toctou_swap_never_leads_outside() {
    let fx = Fixture::new();
    fx.put("dir/sentinel", "inside\n");
    // `alt` is a symlink to the directory holding the real sentinel, under the same name.
    std::os::unix::fs::symlink("../outside", fx.ws.join("alt")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, ws) = (stop.clone(), swaps.clone(), fx.ws.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // Atomically exchange `dir` (real directory) and `alt` (symlink out).
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    ws.join("dir"),
                    rustix::fs::CWD,
                    ws.join("alt"),
                    RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let (mut inside, mut refused, mut wrote) = (0u32, 0u32, 0u32);
    for i in 0..10_000 {
        let r = fx
            .registry
            .call("read_file", &json!({"path": "dir/sentinel"}), &fx.ctx);
        match r {
            reagent_tools::ToolResult::Ok { output, .. } => {
                let text = output.as_str().unwrap_or_default().to_string();
                assert!(
                    !text.contains(SECRET),
                    "read {i} landed outside the workspace"
                );
                assert_eq!(text, "inside\n");
                inside += 1;
            }
            reagent_tools::ToolResult::Err { error } => {
                assert!(!error.contains(SECRET));
                refused += 1;
            }
        }
        if i % 10 == 0 {
            let w = fx.registry.call(
                "write_file",
                &json!({"path": "dir/w.txt", "content": "x"}),
                &fx.ctx,
            );
            wrote += u32::from(w.is_ok());
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    assert!(
        swaps.load(Ordering::Relaxed) > 100,
        "the swap loop barely ran"
    );
    assert!(
        inside > 0 && refused > 0,
        "the race was not exercised: {inside} inside, {refused} refused"
    );
    assert!(wrote > 0, "no write succeeded while racing");
    assert!(
        !fx.outside.join("w.txt").exists(),
        "a write landed outside the workspace"
    );
    // Put things back so `dir` is the real directory again, then check the outside.
    if fs::symlink_metadata(fx.ws.join("dir"))
        .unwrap()
        .file_type()
        .is_symlink()
    {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            fx.ws.join("dir"),
            rustix::fs::CWD,
            fx.ws.join("alt"),
            RenameFlags::EXCHANGE,
        )
        .unwrap();
    }
    assert_eq!(fx.get("dir/sentinel"), "inside\n");
    fx.assert_outside_untouched();
}
