//! Telling an outage (try again later) from a write the database refuses (trying again cannot
//! help), by the error's kind and code, never by its text.

/// Whether a failed write may succeed when tried again: the database was unreachable, busy,
/// restarting or out of resources. `false` means the statement or its data was refused (a
/// constraint, a value the column cannot hold, a missing table): the same write fails again.
pub(crate) fn is_transient(e: &sqlx::Error, sqlite: bool) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => match db.code() {
            Some(code) if sqlite => sqlite_transient(&code),
            Some(code) => postgres_transient(&code),
            // A database error without a code says nothing about the data: try again.
            None => true,
        },
        // Encoding, decoding, configuration, a missing column or type: the statement is wrong.
        _ => false,
    }
}

/// SQLite reports its extended result code; its low byte is the primary code. Refused: a plain
/// SQL error (no such table), TOOBIG, CONSTRAINT, MISMATCH, RANGE. Everything else (BUSY,
/// LOCKED, IOERR, FULL, CANTOPEN, READONLY, NOMEM, …) is about the file, not the data.
fn sqlite_transient(code: &str) -> bool {
    const ERROR: i64 = 1;
    const TOOBIG: i64 = 18;
    const CONSTRAINT: i64 = 19;
    const MISMATCH: i64 = 20;
    const RANGE: i64 = 25;
    match code.parse::<i64>() {
        Ok(n) => !matches!(n & 0xff, ERROR | TOOBIG | CONSTRAINT | MISMATCH | RANGE),
        Err(_) => true,
    }
}

/// PostgreSQL's SQLSTATE: classes 21 (cardinality), 22 (data exception), 23 (integrity
/// constraint), 42 (syntax or a missing object, except 42501 insufficient privilege, which an
/// administrator fixes) and P0 (raised by a function or trigger) are about the statement.
/// Connection (08), resources (53), shutdown (57), serialization and deadlock (40), system (58)
/// and every other class is an outage.
fn postgres_transient(code: &str) -> bool {
    let class = code.get(..2).unwrap_or(code);
    match class {
        "21" | "22" | "23" | "P0" => false,
        "42" => code == "42501",
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_codes() {
        for busy in ["5", "6", "261", "517", "262", "8", "10", "13", "14", "3338"] {
            assert!(sqlite_transient(busy), "{busy}");
        }
        for refused in ["1", "19", "1555", "2067", "1811", "20", "18", "25"] {
            assert!(!sqlite_transient(refused), "{refused}");
        }
    }

    #[test]
    fn postgres_codes() {
        for outage in [
            "08006", "08001", "57P01", "57P03", "40001", "40P01", "53300", "58030",
        ] {
            assert!(postgres_transient(outage), "{outage}");
        }
        for refused in ["23505", "22021", "42P01", "P0001", "21000"] {
            assert!(!postgres_transient(refused), "{refused}");
        }
        assert!(postgres_transient("42501"));
    }

    #[test]
    fn io_and_pool_errors_are_outages_and_encoding_is_not() {
        let io = sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(is_transient(&io, false));
        assert!(is_transient(&sqlx::Error::PoolTimedOut, true));
        let encode = sqlx::Error::Encode("bad".into());
        assert!(!is_transient(&encode, false));
    }
}
