//! The cookies of one remote connection. The RFD requires HTTP clients to accept, store and
//! return the server's cookies for the duration of the connection (a load balancer's affinity
//! cookie, say). As in the Python SDK (0.12.1), only the `name=value` part of each
//! `Set-Cookie` is kept; attributes (path, domain, expiry) are ignored: one endpoint, one
//! connection's lifetime. Bounded: at most [`MAX_COOKIES`] cookies of [`MAX_COOKIE_LEN`] bytes.

/// Cookies kept at most.
pub(crate) const MAX_COOKIES: usize = 32;
/// The longest `name=value` kept.
pub(crate) const MAX_COOKIE_LEN: usize = 4096;

/// The cookie store (insertion order kept, a name set again replaces its value).
#[derive(Debug, Default, Clone)]
pub(crate) struct Cookies {
    pairs: Vec<(String, String)>,
}

impl Cookies {
    /// Keeps the `name=value` of one `Set-Cookie` header value.
    pub(crate) fn store(&mut self, set_cookie: &str) {
        let first = set_cookie.split(';').next().unwrap_or("").trim();
        let Some((name, value)) = first.split_once('=') else { return };
        let (name, value) = (name.trim(), value.trim());
        if name.is_empty() || first.len() > MAX_COOKIE_LEN {
            return;
        }
        if let Some(pair) = self.pairs.iter_mut().find(|(n, _)| n == name) {
            pair.1 = value.to_owned();
        } else if self.pairs.len() < MAX_COOKIES {
            self.pairs.push((name.to_owned(), value.to_owned()));
        }
    }

    /// The `Cookie` header to send, if any cookie is kept.
    pub(crate) fn header(&self) -> Option<String> {
        if self.pairs.is_empty() {
            return None;
        }
        Some(self.pairs.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_value_pairs_are_kept_replaced_and_sent_back_without_attributes() {
        let mut cookies = Cookies::default();
        assert_eq!(cookies.header(), None);
        cookies.store("route=b1; Path=/; HttpOnly");
        cookies.store("lang=en");
        cookies.store("route=b2");
        cookies.store("no-equals-sign; Path=/");
        assert_eq!(cookies.header().as_deref(), Some("route=b2; lang=en"));
    }

    #[test]
    fn the_store_is_bounded() {
        let mut cookies = Cookies::default();
        for i in 0..MAX_COOKIES + 10 {
            cookies.store(&format!("c{i}=v"));
        }
        cookies.store(&format!("big={}", "x".repeat(MAX_COOKIE_LEN)));
        assert_eq!(cookies.pairs.len(), MAX_COOKIES);
        assert!(!cookies.header().unwrap_or_default().contains("big="));
    }
}
