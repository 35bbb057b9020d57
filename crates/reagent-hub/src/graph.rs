//! A goal's task graph: the JSON Schema the hub's model must answer in, and the checks a graph
//! passes before anything is dispatched (ids unique, dependencies inside the graph, no cycles,
//! known tools).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::{HubError, Result};

/// What the model proposes for a goal: tasks with dependencies, and how to check the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskGraph {
    /// The tasks.
    pub tasks: Vec<GraphTask>,
    /// Checks the finished work must pass, in plain words.
    pub acceptance: Vec<String>,
}

/// One task of a graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphTask {
    /// Short id, unique in the graph (`t1`, `write-tests`...).
    pub id: String,
    /// What an agent should do, in plain words.
    pub task: String,
    /// Ids of the tasks that must finish first.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Tools the task needs (each must be a known tool).
    #[serde(default)]
    pub tools: Vec<String>,
}

/// The JSON Schema a decomposition must follow; `tools` items are limited to `known_tools`.
pub fn graph_schema(known_tools: &[String]) -> Value {
    let tool = if known_tools.is_empty() {
        json!({"type": "string"})
    } else {
        json!({"type": "string", "enum": known_tools})
    };
    json!({
        "type": "object",
        "properties": {
            "tasks": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "task": {"type": "string"},
                        "depends_on": {"type": "array", "items": {"type": "string"}},
                        "tools": {"type": "array", "items": tool}
                    },
                    "required": ["id", "task", "depends_on", "tools"]
                }
            },
            "acceptance": {"type": "array", "items": {"type": "string"}, "minItems": 1}
        },
        "required": ["tasks", "acceptance"]
    })
}

impl TaskGraph {
    /// Check the graph and give the order to dispatch it in (indexes into `tasks`, every task
    /// after the tasks it depends on). `known_tools` empty accepts any tool name.
    pub fn validate(&self, known_tools: &[String]) -> Result<Vec<usize>> {
        let bad = |m: String| Err(HubError::InvalidGraph(m));
        if self.tasks.is_empty() {
            return bad("it has no tasks".to_owned());
        }
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, t) in self.tasks.iter().enumerate() {
            if t.id.trim().is_empty() {
                return bad(format!("task #{} has an empty id", i + 1));
            }
            if t.task.trim().is_empty() {
                return bad(format!("task `{}` says nothing to do", t.id));
            }
            if index.insert(t.id.as_str(), i).is_some() {
                return bad(format!("two tasks have the id `{}`", t.id));
            }
        }
        for t in &self.tasks {
            for d in &t.depends_on {
                if !index.contains_key(d.as_str()) {
                    return bad(format!(
                        "task `{}` depends on `{d}`, which is not a task of the graph",
                        t.id
                    ));
                }
            }
            if let Some(tool) = t
                .tools
                .iter()
                .find(|tool| !known_tools.is_empty() && !known_tools.contains(tool))
            {
                return bad(format!(
                    "task `{}` needs the unknown tool `{tool}` (known: {})",
                    t.id,
                    known_tools.join(", ")
                ));
            }
        }
        self.dispatch_order(&index)
    }

    /// Depth-first topological order; a cycle is reported as the path that closes it.
    fn dispatch_order(&self, index: &HashMap<&str, usize>) -> Result<Vec<usize>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnPath,
            Done,
        }
        let mut marks = vec![Mark::New; self.tasks.len()];
        let mut order = Vec::with_capacity(self.tasks.len());
        for root in 0..self.tasks.len() {
            if marks[root] != Mark::New {
                continue;
            }
            // (task, next dependency to look at)
            let mut stack = vec![(root, 0usize)];
            marks[root] = Mark::OnPath;
            while let Some(&(task, next)) = stack.last() {
                if let Some(dep) = self.tasks[task].depends_on.get(next) {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    let Some(&d) = index.get(dep.as_str()) else {
                        continue;
                    };
                    match marks[d] {
                        Mark::New => {
                            marks[d] = Mark::OnPath;
                            stack.push((d, 0));
                        }
                        Mark::OnPath => {
                            let from = stack.iter().position(|&(t, _)| t == d).unwrap_or(0);
                            let mut path: Vec<&str> = stack[from..]
                                .iter()
                                .map(|&(t, _)| self.tasks[t].id.as_str())
                                .collect();
                            path.push(self.tasks[d].id.as_str());
                            return Err(HubError::InvalidGraph(format!(
                                "the dependencies form a cycle: {} (each depends on the next)",
                                path.join(" -> ")
                            )));
                        }
                        Mark::Done => {}
                    }
                } else {
                    marks[task] = Mark::Done;
                    order.push(task);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(tasks: &[(&str, &[&str])]) -> TaskGraph {
        TaskGraph {
            tasks: tasks
                .iter()
                .map(|(id, deps)| GraphTask {
                    id: (*id).to_owned(),
                    task: format!("do {id}"),
                    depends_on: deps.iter().map(|d| (*d).to_owned()).collect(),
                    tools: vec![],
                })
                .collect(),
            acceptance: vec!["it works".into()],
        }
    }

    fn ids(g: &TaskGraph, order: &[usize]) -> Vec<String> {
        order.iter().map(|&i| g.tasks[i].id.clone()).collect()
    }

    #[test]
    fn dependencies_come_first() {
        let g = graph(&[("c", &["a", "b"]), ("b", &["a"]), ("a", &[]), ("d", &[])]);
        let order = ids(&g, &g.validate(&[]).unwrap());
        let pos = |id: &str| order.iter().position(|x| x == id).unwrap();
        assert!(pos("a") < pos("b") && pos("b") < pos("c"), "{order:?}");
        assert_eq!(order.len(), 4);
    }

    #[test]
    fn a_cycle_is_refused_with_its_path() {
        let g = graph(&[("a", &["c"]), ("b", &["a"]), ("c", &["b"]), ("d", &[])]);
        let err = g.validate(&[]).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid task graph: the dependencies form a cycle: a -> c -> b -> a (each depends on the next)"
        );
        let selfish = graph(&[("a", &["a"])]);
        assert!(selfish
            .validate(&[])
            .unwrap_err()
            .to_string()
            .contains("a -> a"));
    }

    #[test]
    fn unknown_dependencies_tools_and_duplicates_are_refused() {
        let g = graph(&[("a", &["zz"])]);
        assert!(g
            .validate(&[])
            .unwrap_err()
            .to_string()
            .contains("`zz`, which is not a task"));
        let g = graph(&[("a", &[]), ("a", &[])]);
        assert!(g
            .validate(&[])
            .unwrap_err()
            .to_string()
            .contains("two tasks have the id `a`"));
        let mut g = graph(&[("a", &[])]);
        g.tasks[0].tools = vec!["launch_rockets".into()];
        let known = vec!["read_file".to_owned()];
        assert!(g
            .validate(&known)
            .unwrap_err()
            .to_string()
            .contains("unknown tool `launch_rockets`"));
        g.tasks[0].tools = vec!["read_file".into()];
        assert_eq!(g.validate(&known).unwrap(), vec![0]);
        assert!(graph(&[]).validate(&[]).is_err());
    }

    #[test]
    fn the_schema_limits_tools_to_the_known_ones() {
        let s = graph_schema(&["read_file".into()]);
        assert_eq!(
            s["properties"]["tasks"]["items"]["properties"]["tools"]["items"]["enum"],
            json!(["read_file"])
        );
    }
}
