//! Issue 17 §1 and §2: the config file with named agents, and the sessions `acp client`
//! records in SQLite, reopened with `--continue`/`--resume` through `session/resume` or
//! `session/load` of `acp agent --history`, or refused (exit 10) when the agent has neither.
//! Every test runs the `acp` binary with `XDG_CONFIG_HOME` and `ACP_STATE_DIR` in a scratch
//! directory.
#![cfg(unix)]

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use acp_cli::store::{AgentRef, Store};
use common::*;

/// A scratch home: `cfg/acp/config.toml`, `state/`, `proj/` (the working directory), `hist/`
/// (the reference agent's history).
struct Home {
    dir: TempDir,
}

impl Home {
    fn new(name: &str) -> Home {
        let dir = TempDir::new(name);
        for sub in ["cfg/acp", "state", "proj", "hist"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Home { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// Writes the config file; `{ACP}` is the `acp` binary, `{HIST}` the history directory.
    fn config(&self, text: &str) {
        let text = text
            .replace("{ACP}", &acp().display().to_string())
            .replace("{HIST}", &self.path("hist").display().to_string());
        std::fs::write(self.path("cfg/acp/config.toml"), text).unwrap();
    }

    /// Runs `acp ARGS` in `proj/` with `stdin`, within 20 s.
    fn run(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = Command::new(acp())
            .args(args)
            .current_dir(self.path("proj"))
            .env_remove("ACP_CONFIG")
            .env("XDG_CONFIG_HOME", self.path("cfg"))
            .env("ACP_STATE_DIR", self.path("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        feed(&mut child.stdin.take().unwrap(), stdin.as_bytes());
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        finish(child, stdout, stderr, Duration::from_secs(20))
    }

    fn ok(&self, args: &[&str]) -> Run {
        let run = self.run(args, "");
        assert_eq!(run.code(), 0, "acp {args:?}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
        run
    }

    fn store(&self) -> Store {
        Store::open(&self.path("state")).unwrap()
    }

    /// The sessions recorded in `proj/`.
    fn sessions(&self) -> Vec<acp_cli::store::Record> {
        self.store().list(Some(&self.path("proj").display().to_string())).unwrap()
    }
}

const REF_AGENTS: &str = r#"
[defaults]
policy = "deny"

[agents.ref]
command = ["{ACP}", "agent", "--quiet", "--history", "{HIST}"]
policy = "allow"
env = { ACP_TEST_MARK = "1" }

[agents.plain]
command = ["{ACP}", "agent", "--quiet"]
"#;

#[test]
fn a_named_agent_runs_with_its_policy_and_is_listed() {
    let home = Home::new("named");
    home.config(REF_AGENTS);
    let file = home.dir.file("proj/note.txt", "the note's text\n");
    let run = home.ok(&["client", "--agent", "ref", "-p", &format!("read {file}")]);
    assert!(run.stdout.contains("echo: read"), "{}", run.stdout);
    assert!(run.stdout.contains("the note's text"), "policy = allow of the entry reads the file:\n{}", run.stdout);
    assert!(run.stdout.contains("policy = \"allow\" in the agent's entry"), "{}", run.stdout);

    let agents = home.ok(&["agents"]);
    assert!(
        agents.stdout.lines().any(|l| l.starts_with("ref ") && l.contains("agent --quiet --history")),
        "{}",
        agents.stdout
    );
    assert!(agents.stdout.lines().any(|l| l.starts_with("plain ")), "{}", agents.stdout);
    let shown = home.ok(&["config", "show"]);
    let path = home.path("cfg/acp/config.toml").display().to_string();
    assert!(shown.stdout.starts_with(&format!("# {path}\n")), "{}", shown.stdout);
    assert!(shown.stdout.contains("[agents.plain]") && shown.stdout.contains("policy = \"deny\""), "{}", shown.stdout);
    assert_eq!(home.ok(&["config", "path"]).stdout.trim(), path);
}

#[test]
fn a_named_agent_gets_its_env_and_cwd_and_its_argv_unsplit() {
    let home = Home::new("envcwd");
    home.config(
        r#"
[agents.wrapped]
command = ["sh", "-c", "echo \"$ACP_TEST_MARK\" \"$PWD\" > \"$1\"; exec \"$2\" agent --quiet", "wrapper", "../marker.txt", "{ACP}"]
env = { ACP_TEST_MARK = "two words" }
cwd = "../../hist"
"#,
    );
    let run = home.ok(&["client", "--agent", "wrapped", "-p", "hi"]);
    assert!(run.stdout.contains("echo: hi"), "{}", run.stdout);
    let marker = std::fs::read_to_string(home.path("marker.txt")).unwrap();
    assert_eq!(marker.trim(), format!("two words {}", home.path("hist").display()));
}

#[test]
fn a_flag_beats_the_config() {
    let home = Home::new("flag");
    home.config(REF_AGENTS);
    let file = home.dir.file("proj/note.txt", "the note's text\n");
    let run = home.ok(&["client", "--agent", "ref", "--deny", "-p", &format!("read {file}")]);
    assert!(!run.stdout.contains("the note's text"), "--deny beats policy = allow:\n{}", run.stdout);
    assert!(run.stdout.contains("Rejected by the user."), "{}", run.stdout);
    // And [defaults] applies to an agent without a policy of its own, also one given by command.
    let run =
        home.ok(&["client", "-p", &format!("read {file}"), "--", &acp().display().to_string(), "agent", "--quiet"]);
    assert!(run.stdout.contains("policy = \"deny\" in [defaults]"), "{}", run.stdout);
}

#[test]
fn a_bad_config_names_the_line_and_a_missing_one_is_fine() {
    let home = Home::new("bad");
    let run = home.ok(&["agents"]);
    assert!(run.stdout.contains("no named agents"), "a missing default config is no error: {}", run.stdout);
    home.config("[agents.x]\ncommand = [\"a\"]\ncolour = \"red\"\n");
    let run = home.run(&["agents"], "");
    assert_eq!(run.code(), 1);
    let path = home.path("cfg/acp/config.toml").display().to_string();
    assert!(run.stderr.contains(&format!("{path}:3:1: unknown field `colour`")), "{}", run.stderr);
    let run = home.run(&["client", "--agent", "x", "-p", "hi"], "");
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(&format!("{path}:3:")), "{}", run.stderr);
    let missing = home.path("none.toml").display().to_string();
    let run = home.run(&["--config", &missing, "agents"], "");
    assert_eq!(run.code(), 1);
    assert!(run.stderr.contains("cannot read the config file"), "{}", run.stderr);
}

#[test]
fn a_session_is_recorded_with_its_title_and_transcript() {
    let home = Home::new("record");
    home.config(REF_AGENTS);
    let run = home.ok(&["client", "--agent", "plain", "-p", "hello world\nsecond line"]);
    assert!(run.stdout.contains("recorded as session 1"), "{}", run.stdout);
    let sessions = home.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].title.as_deref(), Some("hello world"));
    assert_eq!(sessions[0].agent, AgentRef::Named("plain".into()));
    assert_eq!(sessions[0].session_id, "sess-1");
    let list = home.ok(&["sessions"]);
    assert!(
        list.stdout.lines().any(|l| l.contains("open") && l.contains("plain") && l.ends_with("hello world")),
        "{}",
        list.stdout
    );
    let show = home.ok(&["sessions", "show", "1"]);
    assert!(show.stdout.contains("title    hello world"), "{}", show.stdout);
    // The turn is drawn again as the client drew it, line for line: the prompt, the text, the
    // thought, the plan, the tool call, the permission question and its answer, the end.
    let drawn = |out: &str| -> String {
        let from = out.find("> hello world").expect("the prompt");
        let to = out[from..].find("— end of turn").expect("the end of the turn") + from;
        out[from..to].to_owned()
    };
    let live = drawn(&run.stdout);
    assert!(live.contains("? permission: Read (no file)") && live.contains("✗ Read (no file): failed"), "{live}");
    assert_eq!(drawn(&show.stdout), live, "acp sessions show:\n{}\nthe run:\n{}", show.stdout, run.stdout);
}

#[test]
fn continue_resumes_and_resume_loads_against_acp_agent() {
    let home = Home::new("continue");
    home.config(REF_AGENTS);
    home.ok(&["client", "--agent", "ref", "-p", "first prompt"]);
    let run = home.ok(&["client", "--agent", "ref", "--continue", "-p", "second prompt"]);
    let id = &home.sessions()[0].session_id;
    assert!(run.stdout.contains(&format!("resumed session 1 ({id}) with session/resume")), "{}", run.stdout);
    assert_eq!(home.sessions().len(), 1, "--continue opens no new session");
    let show = home.ok(&["sessions", "show", "1"]).stdout;
    let (first, second) = (show.find("> first prompt").unwrap(), show.find("> second prompt").unwrap());
    assert!(first < second, "{show}");

    // An agent that only loads: the history it replays is drawn.
    let hist = home.path("hist").display().to_string();
    let acp = acp().display().to_string();
    let run = home.ok(&[
        "client",
        "--resume",
        "1",
        "-p",
        "third",
        "--",
        &acp,
        "agent",
        "--quiet",
        "--history",
        &hist,
        "--no-resume",
    ]);
    assert!(run.stdout.contains(&format!("loaded session 1 ({id}) with session/load")), "{}", run.stdout);
    for replayed in ["you: first prompt", "echo: first prompt", "you: second prompt"] {
        assert!(run.stdout.contains(replayed), "missing {replayed:?} in:\n{}", run.stdout);
    }
    assert_eq!(home.sessions().len(), 1);

    // The agent's own list, beside ours.
    let list = home.ok(&["sessions", "list", "--agent", "ref"]).stdout;
    assert!(list.contains("agent `ref` lists 1 session(s)"), "{list}");
    assert!(list.lines().any(|l| l.contains(id.as_str()) && l.ends_with("first prompt")), "{list}");
}

#[test]
fn resume_without_agent_support_fails_and_opens_nothing() {
    let home = Home::new("noresume");
    home.config(REF_AGENTS);
    home.ok(&["client", "--agent", "plain", "-p", "hi"]);
    let run = home.run(&["client", "--agent", "plain", "--continue", "-p", "again"], "");
    assert_eq!(run.code(), 10, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "cannot resume session 1 (sess-1): the agent advertises neither sessionCapabilities.resume nor loadSession"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("echo: again"), "no turn ran: {}", run.stdout);
    let run = home.run(&["client", "--resume", "1", "-p", "again"], "");
    assert_eq!(run.code(), 10);
    // The agent is told nothing either: its log (shown) has the handshake and no session.
    let acp = acp().display().to_string();
    let run = home.run(&["client", "--resume", "1", "--show-stderr", "-p", "again", "--", &acp, "agent"], "");
    assert_eq!(run.code(), 10);
    let both = format!("{}{}", run.stdout, run.stderr);
    assert!(both.contains("acp agent: initialize from acp-cli"), "{both}");
    assert!(!both.contains("opened in") && !both.contains("prompt on"), "{both}");
    assert_eq!(home.sessions().len(), 1, "no new session was recorded");
    assert_eq!(home.store().transcript(1).unwrap().iter().filter(|l| l.kind == "user").count(), 1);

    // Closed sessions are not continued; pruned ones are gone.
    home.ok(&["sessions", "close", "1"]);
    let run = home.run(&["client", "--agent", "plain", "--continue", "-p", "x"], "");
    assert_eq!(run.code(), 10);
    assert!(run.stderr.contains("no open session of `plain`"), "{}", run.stderr);
    home.store().set_updated(1, 0).unwrap();
    assert!(home.ok(&["sessions", "prune", "--older-than", "30"]).stdout.contains("pruned 1 session(s)"));
    assert!(home.sessions().is_empty());
}

#[test]
fn two_processes_record_at_once_and_the_database_stays_consistent() {
    let home = std::sync::Arc::new(Home::new("concurrent"));
    home.config(REF_AGENTS);
    const PROCESSES: usize = 3;
    const TURNS: usize = 3;
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let home = home.clone();
            thread::spawn(move || {
                for p in 0..PROCESSES {
                    let input: String = (0..TURNS).map(|t| format!("writer {w} process {p} turn {t}\n")).collect();
                    let run = home.run(&["client", "--agent", "plain"], &input);
                    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
                    let unrecorded = run.stdout.contains("not recorded") || run.stderr.contains("not recorded");
                    assert!(!unrecorded, "a client lost the database to another:\n{}\n{}", run.stdout, run.stderr);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let store = home.store();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let sessions = home.sessions();
    assert_eq!(sessions.len(), 2 * PROCESSES);
    for session in &sessions {
        let lines = store.transcript(session.id).unwrap();
        let prompts: Vec<&str> = lines.iter().filter(|l| l.kind == "user").map(|l| l.text.as_str()).collect();
        assert_eq!(prompts.len(), TURNS, "{lines:?}");
        let title = session.title.as_deref().unwrap();
        assert!(title.ends_with("turn 0") && prompts[0] == title, "{title} {prompts:?}");
        assert_eq!(lines.iter().filter(|l| l.text == "stop: end_turn").count(), TURNS);
    }
}

/// Issue 28 §6: `sessions.db` is opened only as a regular file (or created), and anything else
/// there is refused naming the file and saying what it is. SQLite used to say `disk I/O error`
/// of a FIFO, and of a device without naming the file (`acp: session database: disk I/O
/// error`).
#[cfg(target_os = "linux")]
#[test]
fn a_session_database_that_is_no_regular_file_is_refused_naming_it() {
    let home = Home::new("sessions-db-kinds");
    home.config(REF_AGENTS);
    let db = home.path("state/sessions.db");
    let refused = format!("cannot open {}: ", db.display());
    let fifo = || {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &db,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap()
    };
    let make: [(&str, &dyn Fn(), &str); 3] = [
        ("a FIFO nobody writes", &fifo, "not a regular file"),
        ("a device", &|| std::os::unix::fs::symlink("/dev/zero", &db).unwrap(), "not a regular file"),
        ("a directory", &|| std::fs::create_dir(&db).unwrap(), "is a directory"),
    ];
    for (what, make, why) in make {
        make();
        let run = home.run(&["sessions", "list"], "");
        assert_eq!(run.code(), 1, "{what}: {run:?}");
        let said = run.stderr.to_lowercase();
        assert!(said.contains(&refused.to_lowercase()) && said.contains(why), "{what}: {}", run.stderr);
        // A client records nothing, says why, and runs its turn.
        let run = home.run(&["client", "--agent", "plain", "-p", "hello"], "");
        assert_eq!(run.code(), 0, "{what}: {run:?}");
        assert!(run.stdout.contains("this session is not recorded: cannot open"), "{what}: {}", run.stdout);
        let said = run.stdout.to_lowercase();
        assert!(said.contains(&refused.to_lowercase()) && said.contains(why), "{what}: {}", run.stdout);
        if std::fs::symlink_metadata(&db).unwrap().is_dir() {
            std::fs::remove_dir(&db).unwrap();
        } else {
            std::fs::remove_file(&db).unwrap();
        }
    }
    // A database that does not exist yet is created, private.
    home.ok(&["sessions", "list"]);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&db).unwrap().permissions().mode() & 0o777, 0o600);
}

/// Issue 30 §3: the session database keeps each session's last modes and config options; a
/// reopen whose answer carries none shows the recorded ones, marked as such, and an answer
/// that carries them wins.
#[test]
fn a_reopened_session_keeps_its_modes_when_the_agent_does_not_say_them() {
    let home = Home::new("controls");
    home.config(REF_AGENTS);
    let first = home.run(&["client", "--agent", "ref"], "/mode plan\n");
    assert_eq!(first.code(), 0, "{}\n{}", first.stdout, first.stderr);
    assert!(first.stdout.contains("mode set to `plan`"), "{}", first.stdout);

    let hist = home.path("hist").display().to_string();
    let acp = acp().display().to_string();
    let bare = ["client", "--resume", "1", "--", &acp, "agent", "--quiet", "--history", &hist, "--bare-reopen"];
    let run = home.run(&bare, "/mode\n/model\n");
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("the agent's answer carried no modes or config options: showing those recorded with session 1"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.lines().any(|l| l.contains("* plan (")), "the mode chosen last time:\n{}", run.stdout);
    assert!(run.stdout.lines().any(|l| l.contains("* ref-small (")), "the model recorded:\n{}", run.stdout);
    assert_eq!(run.stdout.matches("(as recorded when the session was last used").count(), 2, "{}", run.stdout);

    // `/load` of the recorded session in another REPL: the same.
    let id = home.sessions().iter().find(|r| r.id == 1).expect("session 1").session_id.clone();
    let fresh = ["client", "--", &acp, "agent", "--quiet", "--history", &hist, "--bare-reopen"];
    let run = home.run(&fresh, &format!("/load {id}\n/mode\n"));
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("showing those recorded with session 1"), "{}", run.stdout);
    assert!(run.stdout.lines().any(|l| l.contains("* plan (")), "{}", run.stdout);
    // That REPL's own record (session 2) is not given the loaded session's modes.
    let own = home.store().controls(2).unwrap().unwrap_or_default();
    assert!(!own.contains("plan"), "session 2's record: {own}");

    // An agent that says them is believed (restarted, it forgot the choice: `default`).
    let told = ["client", "--resume", "1", "--", &acp, "agent", "--quiet", "--history", &hist];
    let run = home.run(&told, "/mode\n");
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.lines().any(|l| l.contains("* default (")), "{}", run.stdout);
    assert!(!run.stdout.contains("(as recorded when") && !run.stdout.contains("carried no"), "{}", run.stdout);
}

/// Issue 30: the transcript follows the REPL's session. After `/load ID` what is said goes
/// into the record of that session (the one of the same agent with that id), after `/new` into
/// a new record; the session the REPL opened keeps only what was said in it.
#[test]
fn the_transcript_follows_load_and_new() {
    let home = Home::new("follow");
    home.config(REF_AGENTS);
    home.ok(&["client", "--agent", "ref", "-p", "first words"]);
    let first = home.sessions()[0].clone();
    let run = home.run(
        &["client", "--agent", "ref"],
        &format!("opening words\n/load {}\nthird words\n/new\nfourth words\n", first.session_id),
    );
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(&format!("recorded with session {} (acp sessions show", first.id)), "{}", run.stdout);
    let records = home.sessions();
    assert_eq!(records.len(), 3, "the first run's, the REPL's own, the /new one: {records:?}");
    let said = |id: i64| -> Vec<String> {
        let lines = home.store().transcript(id).unwrap();
        lines.into_iter().filter(|l| l.kind == "user").map(|l| l.text).collect()
    };
    assert_eq!(said(first.id), ["first words", "third words"]);
    let own = records
        .iter()
        .find(|r| r.id != first.id && said(r.id).contains(&"opening words".to_owned()))
        .expect("the REPL's own");
    assert_eq!(said(own.id), ["opening words"]);
    let new = records.iter().find(|r| r.id != first.id && r.id != own.id).expect("the /new one");
    assert_eq!(said(new.id), ["fourth words"]);
    assert!(run.stdout.contains(&format!("recorded as session {} (acp sessions show", new.id)), "{}", run.stdout);
}
