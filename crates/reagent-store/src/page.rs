//! Pages of runs with their total, for APIs that page by offset and filter by model.

use crate::read::{RunRecord, RUN_COLUMNS};
use crate::{Store, StoreError};

/// Which page of runs to read, newest first.
#[derive(Debug, Clone, Default)]
pub struct RunPage {
    /// Only runs with this outcome (`running` or an outcome name).
    pub outcome: Option<String>,
    /// Only runs of this model.
    pub model: Option<String>,
    /// At most this many (0: no limit).
    pub limit: u32,
    /// Runs to skip first.
    pub offset: u64,
}

impl Store {
    /// One page of runs, newest first, and how many runs match the filter over all pages.
    pub async fn page_runs(&self, page: &RunPage) -> Result<(Vec<RunRecord>, u64), StoreError> {
        let mut filter = String::from(" WHERE 1 = 1");
        let mut n = 0;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        if page.outcome.is_some() {
            filter.push_str(&format!(" AND outcome = {}", next()));
        }
        if page.model.is_some() {
            filter.push_str(&format!(" AND model = {}", next()));
        }
        let binds = [page.outcome.as_deref(), page.model.as_deref()];
        let count_sql = format!("SELECT COUNT(*) FROM runs{filter}");
        let mut count = sqlx::query_scalar::<_, i64>(&count_sql);
        for b in binds.iter().flatten() {
            count = count.bind(*b);
        }
        let total = count
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.query_error("count runs", e))?;
        let mut sql =
            format!("SELECT {RUN_COLUMNS} FROM runs{filter} ORDER BY started DESC, id DESC");
        if page.limit > 0 {
            sql.push_str(&format!(" LIMIT {}", page.limit));
        }
        if page.offset > 0 {
            if page.limit == 0 {
                // Both databases need a LIMIT before OFFSET; -1 / ALL are not shared.
                sql.push_str(&format!(" LIMIT {}", i64::MAX));
            }
            sql.push_str(&format!(" OFFSET {}", page.offset));
        }
        let mut q = sqlx::query(&sql);
        for b in binds.iter().flatten() {
            q = q.bind(*b);
        }
        let rows = q
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.query_error("list runs", e))?;
        let runs = rows
            .iter()
            .map(RunRecord::from_row)
            .collect::<Result<_, _>>()
            .map_err(|e| self.query_error("read runs", e))?;
        Ok((runs, u64::try_from(total).unwrap_or(0)))
    }
}
