//! The one prompt's content blocks (`-p` with `@path` words and `--image`s), as the agent takes
//! them; what is attached and its limits are in [`crate::client::attach`].

use super::Session;
use crate::Exit;
use acp_blocking::acp_proto::types::*;

impl Session {
    /// The one prompt's content blocks for this agent (its text alone when nothing was
    /// prepared); reports why they cannot be sent.
    pub(super) fn prompt_blocks(&mut self, text: &str) -> Result<Vec<ContentBlock>, Exit> {
        let Some(prepared) = self.prepared.take() else { return Ok(vec![ContentBlock::text(text)]) };
        for word in &prepared.unmatched {
            self.render.warn(&format!("{word} names no file: sent as text"));
        }
        match prepared.blocks(&self.prompt_caps) {
            Ok((blocks, notes)) => {
                for note in notes {
                    self.render.info(&note);
                }
                Ok(blocks)
            }
            Err(e) => {
                self.render.error(&e);
                Err(Exit::Failure)
            }
        }
    }
}
