//! The constrained schema following the workspace as a run changes it, and the end of a weak
//! model's run once the files its task names have changed.

use reagent_tools::{workspace_files, Workspace};

use super::{RunState, Session, Settled};
use crate::agent::Agent;
use crate::config::ToolMode;
use crate::tool_mode;
use crate::weak_model::schema_narrowing;

impl Settled {
    /// After a call changed the workspace: in the constrained mode the schema's paths (and a
    /// narrowing's texts) follow the workspace as it is now, so a file just written can be
    /// read, and text just replaced is no longer offered for replacing.
    /// `written` is the file and text a call wrote, if it says.
    fn follow_workspace(
        &mut self,
        agent: &Agent,
        workspace: &Workspace,
        task: &str,
        written: Option<(&str, &str)>,
    ) {
        if self.settings.mode != ToolMode::Constrained {
            return;
        }
        let files = workspace_files(workspace, tool_mode::LISTED_FILES_MAX);
        if let Some(mut old) = self.settings.narrowing.take() {
            if let Some((path, text)) = written {
                old.record_written(path, text);
            }
            self.settings.narrowing = Some(schema_narrowing::narrowing(
                task,
                workspace,
                &files,
                old.written,
            ));
        }
        self.settings.files = Some(files);
        self.constrained_schema = Some(tool_mode::constrained_schema(
            &agent.read_first_specs,
            self.settings.files.as_ref(),
            self.settings.narrowing.as_ref(),
        ));
    }
}

impl Session {
    /// The settled schema follows the workspace after a call changed it
    /// ([`Settled::follow_workspace`]); `task` is the run's, `written` what the call wrote.
    pub(crate) fn follow_workspace(&mut self, task: &str, written: Option<(&str, &str)>) {
        if let Some(settled) = self.settled.as_mut() {
            settled.follow_workspace(&self.agent, &self.workspace, task, written);
        }
    }

    /// Whether the session narrows the schema and every path the run's task names has been
    /// changed by the run (see [`schema_narrowing::Narrowing::all_named_changed`]).
    pub(crate) fn named_files_changed(&self, run: &RunState) -> bool {
        self.settled
            .as_ref()
            .and_then(|s| s.settings.narrowing.as_ref())
            .is_some_and(|n| n.all_named_changed(run.files_changed.iter()))
    }
}
