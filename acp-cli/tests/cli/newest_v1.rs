//! The features of the newest v1 schema, end to end with the built binary: the session
//! updates that need a client capability (`acp client` advertises and draws them, `acp
//! agent`'s `news` sends them only when advertised), form and URL elicitations (`--elicit`,
//! the agent's `elicit`), `systemPrompt`, and `terminal` authentication (`--auth`).

use crate::common;

use acp_blocking::acp_proto::types::*;
use common::*;

#[test]
fn the_client_advertises_and_draws_notices_plans_compactions_subagents_and_tool_names() {
    let dir = TempDir::new("client-news");
    let acp = acp().display().to_string();
    let out = run(&client_args(&acp, &["--allow", "-p", "news"]), dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    let expected = [
        "echo: news",
        "! notice (warning): The reference agent has news\n    Sent because the prompt says `news`.",
        "Plan plan-news\n  [x] Gather the news (high)\n  [~] Tell the user",
        "Plan plan-notes\n  ## Notes\n  - read the *news*\n  - tell the user",
        "plan plan-old removed",
        "⇲ context compaction compaction-1: completed\n    summary: Earlier turns were summarized.",
        "    summary of compaction-1: More summary.",
        "◆ subagent sess-news-child Reader (running)",
        "✉ message msg-news to sess-news-child\n    Please read the file.\n    msg-news:  And summarize it.",
        "▸ Look up the news  [lookup_news · fetch · completed]",
        "done\n— end of turn",
    ];
    let mut from = 0;
    for part in expected {
        let at = out.stdout[from..]
            .find(part)
            .unwrap_or_else(|| panic!("missing {part:?} after {from} in:\n{}", out.stdout));
        from += at + part.len();
    }
    assert!(!out.stdout.contains("not sent"), "every kind was advertised: {}", out.stdout);
}

#[test]
fn without_the_capabilities_the_agents_sends_are_refused_and_nothing_arrives() {
    let dir = TempDir::new("agent-news");
    // The recording client advertises none of the capabilities.
    let (conn, _, _) = spawn_agent(Answer::Pick("allow-once"), None, &[]);
    let session = new_session(&conn, dir.path());
    let mut updates = Vec::new();
    let stop = conn.prompt_with(PromptRequest::new(session, vec!["news".into()]), |u| updates.push(u)).unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    let mut texts = String::new();
    for update in &updates {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => texts.push_str(text_of(&chunk.content)),
            SessionUpdate::ToolCall(call) => assert_eq!(call.name.as_deref(), Some("lookup_news")),
            other => panic!("an update the client did not advertise arrived: {other:?}"),
        }
    }
    let refused = [
        "not sent: notice (needs session.notices)",
        "not sent: plan_update (needs plan)\nnot sent: plan_update (needs plan)\n",
        "not sent: plan_removed (needs plan)",
        "not sent: compaction_update (needs session.compaction)",
        "not sent: compaction_summary_chunk (needs session.compaction)",
        "not sent: subagent_update (needs subagents)",
        "not sent: session_message (needs subagents)",
        "not sent: session_message_chunk (needs subagents)",
    ];
    for line in refused {
        assert!(texts.contains(line), "missing {line:?} in {texts:?}");
    }
    assert!(texts.starts_with("echo: news") && texts.ends_with("done"), "{texts:?}");
}

fn elicit_run(answers: Option<&str>) -> Run {
    let dir = TempDir::new("client-elicit");
    let acp = acp().display().to_string();
    let file = answers.map(|a| dir.file("answers.json", a));
    let mut args = vec!["--allow", "-p", "elicit"];
    if let Some(file) = &file {
        args.extend(["--elicit", file.as_str()]);
    }
    run(&client_args(&acp, &args), dir.path(), "")
}

#[test]
fn elicit_answers_the_agents_form_from_the_file() {
    let out = elicit_run(Some(r#"{"name": "Ada", "count": 3, "unasked": true}"#));
    assert_eq!(out.code(), 0, "{out:?}");
    let form = "? form: Who is asking?\n  → accepted --elicit (count, name)";
    assert!(out.stdout.contains(form), "{}", out.stdout);
    assert!(out.stdout.contains(r#"form accepted: count=3 name="Ada""#), "{}", out.stdout);
}

#[test]
fn a_form_the_file_cannot_fill_is_declined() {
    let out = elicit_run(Some(r#"{"count": "three"}"#));
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("  → declined (the answer for `count` is not of its type)"), "{}", out.stdout);
    assert!(out.stdout.contains("form declined"), "{}", out.stdout);
    let out = elicit_run(Some(r#"{"count": 2}"#));
    assert!(out.stdout.contains("  → declined (no answer for the required `name`)"), "{}", out.stdout);
    assert!(out.stdout.contains("form declined"), "{}", out.stdout);
}

#[test]
fn without_elicit_forms_are_not_advertised_so_the_agent_does_not_ask() {
    let out = elicit_run(None);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("no form: the client did not advertise elicitation.form"), "{}", out.stdout);
    assert!(!out.stdout.contains("? form:"), "{}", out.stdout);
}

#[test]
fn an_unreadable_elicit_file_stops_the_client_before_the_agent_starts() {
    let out = elicit_run(Some("[1, 2]"));
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.contains("not a JSON object of field names to values"), "{}", out.stdout);
}

#[test]
fn the_agent_keeps_an_append_system_prompt_and_refuses_override() {
    let dir = TempDir::new("agent-system");
    let (conn, _, init) = spawn_agent(Answer::Pick("allow-once"), None, &[]);
    assert!(init.agent_capabilities.session_capabilities.system_prompt.is_some());
    let mut request = NewSessionRequest::new(dir.path().display().to_string(), vec![]);
    request.system_prompt = Some(SystemPrompt::append("Be brief."));
    let timed = conn.with_timeout(std::time::Duration::from_secs(10));
    let session = timed.new_session(request.clone()).unwrap().session_id;
    let mut texts = Vec::new();
    let stop = conn.prompt_with(PromptRequest::new(session, vec!["elicit".into()]), |u| {
        if let SessionUpdate::AgentMessageChunk(chunk) = u {
            texts.push(text_of(&chunk.content).to_owned());
        }
    });
    assert_eq!(stop.unwrap(), StopReason::EndTurn);
    assert_eq!(texts[..2], ["echo: elicit", "\nsystem prompt: Be brief."], "{texts:?}");
    // The agent advertises `append` only, so the client's core refuses `override` locally.
    request.system_prompt = Some(SystemPrompt::override_with("Be someone else."));
    let refused = timed.new_session(request).unwrap_err();
    assert!(refused.to_string().contains("sessionCapabilities.systemPrompt.mode.override"), "{refused}");
}

#[test]
fn auth_runs_a_terminal_method_with_its_args_and_env_then_authenticates() {
    let dir = TempDir::new("terminal-auth");
    let mark = dir.path().join("logged-in");
    let seen = dir.path().join("requests");
    let script = format!(
        "if [ \"$1\" = login ]; then printf '%s' \"$ACP_T\" > '{mark}'; exit 0; fi; \
         read l; printf '%s\\n' \"$l\" >> '{seen}'; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"protocolVersion\":1,\"authMethods\":[{{\"type\":\"terminal\",\
         \"id\":\"login\",\"name\":\"Log in\",\"args\":[\"login\"],\"env\":{{\"ACP_T\":\"token-ok\"}}}}]}}}}'; \
         read l; printf '%s\\n' \"$l\" >> '{seen}'; echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}'; \
         read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"sessionId\":\"s1\"}}}}'; \
         read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"stopReason\":\"end_turn\"}}}}'; \
         while read l; do :; done",
        mark = mark.display(),
        seen = seen.display()
    );
    let args = ["client", "--auth", "login", "-p", "hi", "--", "sh", "-c", &script, "fake-agent"];
    let out = run(&args, dir.path(), "");
    assert_eq!(out.code(), 0, "{out:?}");
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "token-ok", "the method's env reached the command");
    let requests = std::fs::read_to_string(&seen).unwrap();
    let lines: Vec<&str> = requests.lines().collect();
    assert!(lines[0].contains(r#""auth":{"terminal":true}"#), "terminal auth is advertised: {requests}");
    assert!(lines[1].contains(r#""method":"authenticate""#) && lines[1].contains("login"), "{requests}");
    let ran = "running `sh -c ";
    let (at_run, at_auth) = (out.stdout.find(ran), out.stdout.find("authenticated with `login`"));
    assert!(at_run.is_some() && at_auth.is_some() && at_run < at_auth, "{}", out.stdout);
    assert!(out.stdout.contains("fake-agent login` for `login` (Log in)"), "{}", out.stdout);
}
