//! The `acp-bench` binary driven as `bench/run.sh` drives it, at small sizes: every
//! configuration × workload validates and prints its `METRIC` lines; the client runs against
//! another adapter's agent and (when Node and `interop/node_modules` are present) against the
//! official TypeScript SDK's agent; a broken agent fails the run instead of hanging it.
//!
//! Nothing here is timed: the figures are only checked to be present and positive.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_acp-bench");

fn run(args: &[&str]) -> Output {
    Command::new(EXE).args(args).output().expect("acp-bench runs")
}

/// The `METRIC name=value unit` lines of a successful run, by name.
fn metrics(output: &Output) -> HashMap<String, f64> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "acp-bench failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("METRIC "))
        .map(|rest| {
            let (name, value) = rest.split_once('=').expect("name=value");
            let value = value.split_whitespace().next().expect("a value").parse().expect("a number");
            (name.to_owned(), value)
        })
        .collect()
}

/// Small sizes of each workload: (workload, extra arguments, the metrics it must report).
fn workloads() -> [(&'static str, Vec<&'static str>, &'static [&'static str]); 3] {
    [
        ("w1", vec!["--updates", "3000"], &["w1_seconds", "w1_updates_per_s"]),
        ("w2", vec!["--prompts", "200"], &["w2_seconds", "w2_rtt_per_s", "w2_p50_us", "w2_p99_us"]),
        ("w3", vec!["--sessions", "8", "--prompts", "5"], &["w3_seconds", "w3_prompts_per_s", "w3_frames_per_s"]),
    ]
}

#[test]
fn every_configuration_runs_every_workload() {
    for config in ["tokio-stdio", "blocking-stdio", "tokio-duplex", "tokio-ws", "core-direct"] {
        for (workload, extra, want) in workloads() {
            let mut args = vec!["client", "--config", config, "--workload", workload];
            args.extend(&extra);
            let m = metrics(&run(&args));
            for name in want {
                let v = m.get(*name).unwrap_or_else(|| panic!("{config} {workload}: no {name} in {m:?}"));
                assert!(*v > 0.0, "{config} {workload}: {name} = {v}");
            }
            if config.ends_with("-stdio") {
                let rss = m.get("agent_peak_rss_kb").unwrap_or_else(|| panic!("{config}: no agent RSS"));
                assert!(*rss > 0.0);
            }
        }
    }
}

#[test]
fn the_client_drives_the_other_adapters_agent_given_after_the_separator() {
    // Our workloads are a wire contract: the tokio client against the blocking agent and the
    // other way round.
    for (client, agent) in [("tokio", "blocking"), ("blocking", "tokio")] {
        let m = metrics(&run(&[
            "client",
            "--adapter",
            client,
            "--workload",
            "w3",
            "--sessions",
            "4",
            "--prompts",
            "3",
            "--",
            EXE,
            "agent",
            "--adapter",
            agent,
        ]));
        assert!(m["w3_prompts_per_s"] > 0.0, "{client} client, {agent} agent");
    }
}

#[test]
fn the_round_trip_floor_reports_w2_metrics_and_measures_w2_only() {
    // `client --config floor`: one line ping-ponged with `acp-bench floor-echo` over pipes.
    let m = metrics(&run(&["client", "--config", "floor", "--workload", "w2", "--prompts", "300"]));
    for name in ["w2_seconds", "w2_rtt_per_s", "w2_p50_us", "w2_p99_us"] {
        assert!(m.get(name).is_some_and(|v| *v > 0.0), "floor: {name} missing or zero in {m:?}");
    }
    assert!(m["w2_p50_us"] <= m["w2_p99_us"], "{m:?}");
    // 300 round trips in w2_seconds. Both are rounded as printed: seconds to 4 decimals, so a fast
    // host (300 trips in under a millisecond) may be off by half a unit of 0.0001 s times the rate.
    let count = m["w2_rtt_per_s"] * m["w2_seconds"];
    let rounding = m["w2_rtt_per_s"] * 0.00005 + 1.0;
    assert!((count - 300.0).abs() < 300.0 * 0.02 + rounding, "{count} round trips counted, {m:?}");
    // An echo that answers something else fails the run.
    let out =
        run(&["client", "--config", "floor", "--workload", "w2", "--prompts", "5", "--", "/bin/sh", "-c", "echo no"]);
    assert!(!out.status.success() && !String::from_utf8_lossy(&out.stdout).contains("METRIC"));
    for workload in ["w1", "w3"] {
        let out = run(&["client", "--config", "floor", "--workload", workload]);
        assert!(!out.status.success(), "floor {workload} is refused");
        assert!(String::from_utf8_lossy(&out.stderr).contains("w2 only"));
    }
}

#[test]
fn an_agent_that_does_not_follow_the_workload_fails_the_run() {
    // An agent that exits at once: the client reports the failure and prints no metrics.
    let out = run(&["client", "--workload", "w1", "--updates", "10", "--", "/bin/sh", "-c", "exit 0", "agent"]);
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("METRIC"));
    assert!(!out.stderr.is_empty(), "the failure is explained on stderr");
    // Bad arguments are refused with the usage.
    let out = run(&["client", "--workload", "w9"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown workload"));
}

#[test]
fn the_client_measures_the_typescript_sdk_agent() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sdk = root.join("interop/node_modules/@agentclientprotocol/sdk/package.json");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !sdk.exists() {
        assert!(
            !std::env::var("ACP_REQUIRE_INTEROP").is_ok_and(|v| v == "1"),
            "ACP_REQUIRE_INTEROP=1 but node or interop/node_modules is missing"
        );
        eprintln!("SKIPPED: needs node and interop/node_modules (npm ci in interop/)");
        return;
    }
    let agent = root.join("bench/ts-agent.mjs").display().to_string();
    for (workload, extra, want) in workloads() {
        let mut args = vec!["client", "--workload", workload];
        args.extend(&extra);
        args.extend(["--", "node", agent.as_str()]);
        let m = metrics(&run(&args));
        for name in want {
            assert!(m.get(*name).is_some_and(|v| *v > 0.0), "ts agent {workload}: {name} missing in {m:?}");
        }
    }
}

/// Runs `acp-bench ARGS` with `input` as its whole stdin (`printf INPUT | acp-bench ARGS`).
fn run_with_input(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(EXE)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("acp-bench runs");
    let mut stdin = child.stdin.take().expect("piped");
    stdin.write_all(input.as_bytes()).expect("written");
    drop(stdin);
    child.wait_with_output().expect("acp-bench ends")
}

#[test]
fn the_agent_answers_an_initialize_that_arrives_just_before_the_end_of_input() {
    // `printf '<initialize>\n' | acp-bench agent`, on both adapters: the end of input is a
    // half-close, so the request read just before it is answered before the agent exits.
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    for adapter in ["tokio", "blocking"] {
        let out = run_with_input(&["agent", "--adapter", adapter], &format!("{init}\n"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{adapter}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
        let answer: serde_json::Value = serde_json::from_str(stdout.trim_end()).expect("one JSON answer");
        assert_eq!((&answer["id"], &answer["result"]["protocolVersion"]), (&0.into(), &1.into()), "{adapter}");
    }
}
