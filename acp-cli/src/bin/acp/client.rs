//! `acp client`: a terminal client for any ACP agent, local or remote.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use acp_cli::client::{self, ClientConfig, Output};
use acp_cli::config::{Format, Loaded};
use acp_cli::{Exit, Protocol, setup};
use clap::Args;

use crate::policy::PolicyArgs;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  acp client -- acp agent\n  acp client --allow -p 'read /etc/hostname' -- acp agent\n  \
acp client --root . --root /tmp -- npx @zed-industries/claude-code-acp\n\n\
Ctrl-C cancels the running turn (session/cancel); a second Ctrl-C quits (one quits an idle client). \
SIGTERM or SIGHUP ends the client wherever it is: the turn is cancelled and the agent closed. No process \
started for the agent outlives the client.\n\n\
Under --deny the agent may read files in the roots but not write them nor run commands (neither is \
advertised); under --ask each write or command is asked first unless it belongs to a tool call the user \
just allowed.\n\n\
Elicitations (the agent asks for input): on a terminal (and without --elicit) a form is filled field \
by field (typed and checked against its schema; Enter takes a default or skips an optional field) and \
then accepted (a), declined (d) or cancelled (c, or Ctrl-C); a URL is shown, inert, and accepted (y, \
once opened) or declined (n). /cancel typed at a form's field or at a permission question is not an \
answer: it cancels the turn (the questions are answered cancelled, then session/cancel). Not on a terminal: forms are answered from --elicit FILE.json (else not advertised), \
and URLs are declined.\n\n\
Scripting (one prompt: -p TEXT, -p - for stdin, or --file PATH):\n  \
acp client --format json -p 'summarize @README.md' -- acp agent | jq -c 'select(.type==\"summary\")'\n  \
git diff | acp client --quiet -p - -- acp agent\n\n\
A word @PATH attaches that file (inside the roots): embedded when the agent advertises \
embeddedContext (at most 1 MiB), a resource_link otherwise. --image needs an agent that advertises images.\n\n\
Exit codes:\n  \
0    end_turn (interactive: the user quit)\n  \
1    local failure (bad arguments, the agent could not start, a missing file, I/O)\n  \
2    usage error\n  \
3    cancelled\n  \
4    refusal\n  \
5    max_tokens or max_turn_requests\n  \
6    protocol error (the agent answered with an error or something invalid)\n  \
7    the agent died\n  \
8    authentication required (--auth METHOD_ID)\n  \
9    no answer to initialize/authenticate/session/new within --connect-timeout\n  \
10   --resume/--continue: no such session, or the agent can reopen none\n  \
129  ended by SIGHUP (the turn cancelled, the agent closed)\n  \
130  quit with Ctrl-C\n  \
143  ended by SIGTERM (the turn cancelled, the agent closed)\n\n\
Without -p, each line is a prompt; /help lists the commands (/cancel, /mode, /model, /config, /sessions, \
/new, /load, /quit) and the agent's own; //text sends /text. On a terminal lines are edited with history \
($ACP_STATE_DIR, else $XDG_STATE_HOME/acp, else ~/.local/state/acp) and Tab completes commands."
)]
pub(crate) struct ClientArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// A directory the agent may read and write files and run commands in (repeatable;
    /// default: the working directory).
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Run this one prompt, then exit with its stop reason, instead of the interactive loop
    /// (`-` reads the prompt from stdin). Words `@PATH` attach files.
    #[arg(short = 'p', long = "prompt", value_name = "TEXT")]
    prompt: Option<String>,
    /// Run the prompt in this file (like -p).
    #[arg(long, value_name = "PATH", conflicts_with = "prompt")]
    file: Option<PathBuf>,
    /// Send this image with the prompt (png, jpeg, gif or webp; repeatable); the agent must
    /// advertise images.
    #[arg(long = "image", value_name = "FILE")]
    images: Vec<PathBuf>,
    /// What stdout carries: the session drawn (text) or every frame as NDJSON and a final
    /// summary record (json; one prompt only).
    /// Default: `[defaults] format` of the config file for one prompt, else text.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<Format>,
    /// Print only the agent's final message (its text after the turn's last tool call) on
    /// stdout (one prompt only; errors and questions on stderr).
    #[arg(short = 'q', long, conflicts_with = "format")]
    quiet: bool,
    /// Show the agent's stderr as it is written (otherwise only its tail, if it dies).
    #[arg(long)]
    show_stderr: bool,
    /// The session's working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Authenticate with this method (one of the agent's authMethods) before the session.
    #[arg(long, value_name = "METHOD_ID")]
    auth: Option<String>,
    /// Answer the agent's forms (elicitation/create, form mode) from this JSON object of field
    /// names to values; without it forms are asked on the terminal, or, without a terminal,
    /// not advertised.
    #[arg(long, value_name = "FILE.json")]
    elicit: Option<PathBuf>,
    /// How long the agent gets to answer each of initialize, authenticate and session/new
    /// (exit code 9 past it; default: the config's connect_timeout, else 30).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    connect_timeout: Option<u64>,
    /// Offer terminals to the agent even when the kernel cannot confine them to the roots
    /// (Landlock); without it such a client does not offer terminals.
    #[arg(long)]
    unconfined_terminals: bool,
    /// Talk to a remote agent at this URL instead of spawning AGENT_CMD: ws://HOST:PORT/acp
    /// (WebSocket; wss:// with TLS) or http://HOST:PORT/acp (Streamable HTTP; https:// with
    /// TLS, HTTP/2 when the server offers it), e.g. one served by `acp serve`.
    #[arg(long, value_name = "URL", conflicts_with_all = ["agent", "agent_name"])]
    connect: Option<String>,
    /// With --connect to an `acp serve --share` server: join the live session ID that another
    /// client holds (its id as that client shows it) instead of opening one: see its updates,
    /// prompt in it, answer its permission asks (the first answer wins). Needs the credential
    /// (--token-file) that opened the session's connection. Unstable (the draft RFD
    /// "multi-client session attach").
    #[arg(long, value_name = "ID", requires = "connect", conflicts_with_all = ["resume", "continue_last"])]
    attach: Option<String>,
    /// With --attach: watch only (prompts, cancels and permission answers are refused).
    #[arg(long, requires = "attach", conflicts_with = "prompt")]
    observe: bool,
    /// Run the named agent of the config file (`[agents.NAME]`) instead of AGENT_CMD.
    #[arg(long = "agent", value_name = "NAME", conflicts_with = "agent")]
    agent_name: Option<String>,
    /// Reopen a recorded session (its id in `acp sessions`) with session/resume or
    /// session/load; exit code 10 if the agent supports neither.
    #[arg(long, value_name = "ID", conflicts_with_all = ["continue_last", "connect"])]
    resume: Option<String>,
    /// Reopen the latest open session of this project with the same agent (as --resume).
    #[arg(long = "continue", conflicts_with = "connect")]
    continue_last: bool,
    /// With --connect: a file holding the bearer token the server requires.
    #[arg(long, value_name = "FILE", requires = "connect")]
    token_file: Option<PathBuf>,
    /// With --connect wss://… or https://…: trust only the CA certificates in this PEM file (a private CA)
    /// instead of the system's roots.
    #[arg(long, value_name = "PEM", requires = "connect")]
    ca_file: Option<PathBuf>,
    /// The ACP version to offer: 1, or 2 (the v2 Preview; needs a build with the feature
    /// unstable_protocol_v2; an agent that answers 1 is an error, exit code 6). Both run the
    /// same client with the same options, but for --attach (v1 only); v2 has no fs/* or
    /// terminal/* (--root serves nothing), no modes (/mode: use the agent's config options)
    /// and no session/load (--resume and /load use session/resume).
    /// --resume/--continue reopen a session in the version it was spoken in.
    #[arg(long, value_enum, value_name = "VERSION")]
    protocol: Option<Protocol>,
    /// The agent's command line, after `--`.
    #[arg(last = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

impl ClientArgs {
    /// The one prompt of the run, from -p, stdin or --file; checks that json, quiet and images
    /// have one.
    fn prompt(&self) -> Result<Option<String>, String> {
        let prompt = match (&self.prompt, &self.file) {
            (Some(text), _) if text == "-" => Some(client::read_prompt(Path::new("-"))?),
            (Some(text), _) => Some(text.clone()),
            (None, Some(path)) => Some(client::read_prompt(path)?),
            (None, None) => None,
        };
        if prompt.is_none() {
            let needs = if self.quiet {
                Some("--quiet")
            } else if self.format == Some(Format::Json) {
                Some("--format json")
            } else {
                (!self.images.is_empty()).then_some("--image")
            };
            if let Some(flag) = needs {
                return Err(format!(
                    "{flag} needs one prompt (-p TEXT, -p - or --file PATH), not the interactive loop"
                ));
            }
        }
        if self.prompt.as_deref() == Some("-") && self.policy.ask {
            return Err("-p - reads the prompt from stdin, so --ask cannot read answers there".to_owned());
        }
        Ok(prompt)
    }

    /// The client's settings these arguments ask for, with the config file's named agent,
    /// defaults and policy (`setup::apply`); the error says what is wrong and how to exit.
    fn config(self, prompt: Option<String>, loaded: &Loaded) -> Result<ClientConfig, (String, Exit)> {
        let usage = |e: String| (e, Exit::Usage);
        let mut config = ClientConfig::new(self.agent);
        config.cwd = self.cwd;
        config.connect = self.connect;
        if let Some(session) = self.attach {
            if self.protocol.unwrap_or_default() != Protocol::V1 {
                return Err(usage("--attach speaks ACP v1 only; drop --protocol 2".to_owned()));
            }
            config.attach = Some(client::Attach { session, observe: self.observe });
        }
        let choice = setup::Choice {
            name: self.agent_name,
            resume: self.resume,
            continue_last: self.continue_last,
            policy: self.policy.policy(),
            connect_timeout: self.connect_timeout,
            roots: self.roots,
            protocol: self.protocol,
        };
        setup::apply(&mut config, choice, loaded)?;
        // `[defaults] format` applies to one-prompt runs when --format is not given.
        let configured = loaded.config.defaults.format.filter(|_| prompt.is_some());
        let format = self.format.or(configured).unwrap_or(Format::Text);
        config.prompt = prompt;
        config.images = self.images;
        config.output = match (self.quiet, format) {
            (true, _) => Output::Quiet,
            (false, Format::Json) => Output::Json,
            (false, Format::Text) => Output::Text,
        };
        config.show_stderr = self.show_stderr;
        config.auth = self.auth;
        config.elicit = self.elicit;
        config.unconfined_terminals = self.unconfined_terminals;
        config.die_with_client = true;
        config.ca_file = self.ca_file;
        if let Some(path) = &self.token_file {
            config.token = Some(acp_cli::files::read_token(path).map_err(usage)?);
        }
        Ok(config)
    }
}

/// Runs the client: one prompt, or the interactive loop.
pub(crate) fn run(args: ClientArgs, load: impl FnOnce() -> Result<Loaded, String>) -> ExitCode {
    let prompt = match args.prompt() {
        Ok(prompt) => prompt,
        Err(e) => {
            eprintln!("acp client: {e}");
            return ExitCode::from(2);
        }
    };
    let loaded = match load() {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("acp client: {e}");
            return Exit::Failure.into();
        }
    };
    match args.config(prompt, &loaded) {
        Ok(config) => client::run(config).into(),
        Err((e, exit)) => {
            eprintln!("acp client: {e}");
            exit.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Command, parse};

    fn args(args: &[&str]) -> ClientArgs {
        match parse(&[&["client"], args, &["--", "acp", "agent"]].concat()) {
            Command::Client(args) => args,
            other => panic!("{other:?}"),
        }
    }

    /// An empty config file (none at the default place).
    fn loaded() -> Loaded {
        Loaded { path: PathBuf::from("/nonexistent/acp/config.toml"), exists: false, config: Default::default() }
    }

    fn config(flags: &[&str], loaded: &Loaded) -> Result<ClientConfig, (String, Exit)> {
        let args = args(flags);
        let prompt = args.prompt().map_err(|e| (e, Exit::Usage))?;
        args.config(prompt, loaded)
    }

    #[test]
    fn one_prompt_flags_need_a_prompt() {
        let e = args(&["--quiet"]).prompt().expect_err("refused");
        assert!(e.starts_with("--quiet needs one prompt"), "{e}");
        let e = args(&["--format", "json"]).prompt().expect_err("refused");
        assert!(e.starts_with("--format json needs one prompt"), "{e}");
        let e = args(&["-p", "-", "--ask"]).prompt().expect_err("refused");
        assert!(e.contains("--ask cannot read answers there"), "{e}");
        assert_eq!(args(&["-p", "hi"]).prompt(), Ok(Some("hi".to_owned())));
    }

    #[test]
    fn the_output_follows_the_flags_then_the_config_file() {
        let c = config(&["-p", "hi"], &loaded()).expect("a config");
        assert_eq!((c.output, c.prompt.as_deref()), (Output::Text, Some("hi")));
        assert_eq!(c.agent, ["acp", "agent"].map(OsString::from));
        assert_eq!(config(&["-p", "hi", "--quiet"], &loaded()).expect("a config").output, Output::Quiet);
        let mut json = loaded();
        json.config.defaults.format = Some(Format::Json);
        assert_eq!(config(&["-p", "hi"], &json).expect("a config").output, Output::Json);
        // `[defaults] format` is for one-prompt runs: the interactive loop draws text.
        assert_eq!(config(&[], &json).expect("a config").output, Output::Text);
        assert_eq!(config(&["-p", "hi", "--format", "text"], &json).expect("a config").output, Output::Text);
    }

    #[test]
    fn attach_speaks_v1_only() {
        let flags = ["--connect", "ws://127.0.0.1:9/acp", "--attach", "sess-1", "--protocol", "2"];
        let parsed = parse(&[&["client"], &flags[..]].concat());
        let Command::Client(args) = parsed else { panic!("{parsed:?}") };
        let (e, exit) = args.config(None, &loaded()).expect_err("refused");
        assert_eq!(exit, Exit::Usage);
        assert!(e.contains("--attach speaks ACP v1 only"), "{e}");
    }
}
