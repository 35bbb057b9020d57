//! `reagent eval` results: the whole result document as opaque JSON text (reagent-eval's format,
//! which the store never reads), with the few fields a list shows and finds it by.

use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::{now_rfc3339, Store, StoreError};

/// What the rows of an eval result are called in messages.
const NOUN: &str = "eval result";

/// An eval result to save.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvalResult {
    /// The suite's name.
    pub suite: String,
    /// The model measured.
    pub model: String,
    /// Its provider (`ollama`, `openai`...).
    pub provider: String,
    /// Runs whose checks all held.
    pub passed: u32,
    /// Runs.
    pub total: u32,
    /// The result document (JSON text), stored as given.
    pub document: String,
}

/// A stored eval result as listed (without its document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvalRecord {
    /// Its id (a UUID without dashes; any unique prefix finds it).
    pub id: String,
    /// When it was stored (RFC 3339, UTC, milliseconds).
    pub created: String,
    /// The suite's name.
    pub suite: String,
    /// The model measured.
    pub model: String,
    /// Its provider.
    pub provider: String,
    /// Runs whose checks all held.
    pub passed: i64,
    /// Runs.
    pub total: i64,
}

/// A stored eval result with its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvalResult {
    /// Its row.
    pub record: EvalRecord,
    /// The result document as it was saved.
    pub document: String,
}

const COLUMNS: &str = "id, created, suite, model, provider, passed, total";

impl EvalRecord {
    fn from_row(row: &AnyRow) -> Result<EvalRecord, sqlx::Error> {
        Ok(EvalRecord {
            id: row.try_get("id")?,
            created: row.try_get("created")?,
            suite: row.try_get("suite")?,
            model: row.try_get("model")?,
            provider: row.try_get("provider")?,
            passed: row.try_get("passed")?,
            total: row.try_get("total")?,
        })
    }
}

impl Store {
    /// Save an eval result; returns the id it is stored under.
    pub async fn save_eval_result(&self, result: &NewEvalResult) -> Result<String, StoreError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        sqlx::query(
            "INSERT INTO eval_results (id, created, suite, model, provider, passed, total, document) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(id.as_str())
        .bind(now_rfc3339())
        .bind(result.suite.as_str())
        .bind(result.model.as_str())
        .bind(result.provider.as_str())
        .bind(i64::from(result.passed))
        .bind(i64::from(result.total))
        .bind(result.document.as_str())
        .execute(&self.pool)
        .await
        .map_err(|e| self.query_error("save an eval result", e))?;
        Ok(id)
    }

    /// Stored eval results, newest first, at most `limit` (0: all).
    pub async fn list_eval_results(&self, limit: u32) -> Result<Vec<EvalRecord>, StoreError> {
        let mut sql = format!("SELECT {COLUMNS} FROM eval_results ORDER BY created DESC, id DESC");
        if limit > 0 {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let fail = |e| self.query_error("list eval results", e);
        let rows = sqlx::query(&sql)
            .fetch_all(&self.pool)
            .await
            .map_err(fail)?;
        rows.iter()
            .map(EvalRecord::from_row)
            .collect::<Result<_, _>>()
            .map_err(fail)
    }

    /// The eval result whose id is `id_or_prefix` or starts with it (a prefix matching none or
    /// several is [`StoreError::NotFound`], as for runs).
    pub async fn load_eval_result(
        &self,
        id_or_prefix: &str,
    ) -> Result<StoredEvalResult, StoreError> {
        let id = self.unique_id("eval_results", NOUN, id_or_prefix).await?;
        let fail = |e| self.query_error("read an eval result", e);
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS}, document FROM eval_results WHERE id = $1"
        ))
        .bind(id.as_str())
        .fetch_optional(&self.pool)
        .await
        .map_err(fail)?
        .ok_or_else(|| StoreError::NotFound(format!("{NOUN} {id} was deleted meanwhile")))?;
        Ok(StoredEvalResult {
            record: EvalRecord::from_row(&row).map_err(fail)?,
            document: row.try_get("document").map_err(fail)?,
        })
    }
}
