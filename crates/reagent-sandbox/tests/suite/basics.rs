//! exec basics: exit codes, stdin, output capture, cwd, env, timeouts.

use super::harness::Fixture;

#[test]
fn echo_and_exit_code() {
    let f = Fixture::new();
    let out = f.run("echo hello; echo oops >&2; exit 3");
    assert_eq!(out.stdout, "hello\n");
    assert_eq!(out.stderr, "oops\n");
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.signal, None);
    assert!(!out.timed_out);
    assert_eq!(out.truncated_bytes, 0);
}

#[test]
fn cwd_is_the_workspace_and_writes_land_there() {
    let f = Fixture::new();
    let out = f.run("pwd; echo data > made.txt");
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let ws = f.path().canonicalize().unwrap();
    assert_eq!(out.stdout.trim_end(), ws.to_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(f.path().join("made.txt")).unwrap(),
        "data\n"
    );
}

#[test]
fn probe_reports_something() {
    let r = reagent_sandbox::probe();
    let text = r.to_string();
    assert!(text.contains("landlock"), "{text}");
    println!("{text}");
}
