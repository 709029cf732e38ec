//! A bound on how deeply a JSON text nests, checked before any parser sees it.
//!
//! Parsers and the code walking their values recurse once per level, so a
//! few kilobytes of `[[[[…` can exhaust a thread's stack and abort the whole
//! process. Every JSON body billpay reads from outside (API requests,
//! supplier and gateway callbacks) passes [`check_nesting`] first: one pass
//! over the bytes, no recursion, no allocation.

/// Deeper than any request, callback or answer billpay reads (they nest two
/// or three levels); far below what would strain a stack.
pub const MAX_NESTING: usize = 32;

/// The text nests arrays and objects deeper than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    pub limit: usize,
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JSON nested deeper than {} levels", self.limit)
    }
}

impl std::error::Error for TooDeep {}

/// Refuses a text whose arrays and objects nest deeper than `limit`.
/// Brackets inside strings do not count; malformed text is left for the
/// parser to refuse.
pub fn check_nesting(text: &[u8], limit: usize) -> Result<(), TooDeep> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in text {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Err(TooDeep { limit });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        "[".repeat(depth) + &"]".repeat(depth)
    }

    #[test]
    fn nesting_up_to_the_limit_passes() {
        assert_eq!(check_nesting(nested(32).as_bytes(), 32), Ok(()));
        assert_eq!(check_nesting(br#"{"a":{"b":[1,{"c":2}]}}"#, 4), Ok(()));
    }

    #[test]
    fn nesting_past_the_limit_is_refused_however_deep() {
        for depth in [33, 2_000, 100_000] {
            assert_eq!(
                check_nesting(nested(depth).as_bytes(), 32),
                Err(TooDeep { limit: 32 })
            );
        }
        assert_eq!(
            check_nesting(br#"{"a":{"b":[1]}}"#, 2),
            Err(TooDeep { limit: 2 })
        );
    }

    #[test]
    fn brackets_inside_strings_do_not_count() {
        let text = format!(r#"{{"a":"{}","b":"\"[[["}}"#, "[".repeat(100));
        assert_eq!(check_nesting(text.as_bytes(), 1), Ok(()));
    }

    #[test]
    fn siblings_do_not_add_up() {
        let text = "[".to_owned() + &"[],".repeat(1_000) + "[]]";
        assert_eq!(check_nesting(text.as_bytes(), 2), Ok(()));
    }
}
