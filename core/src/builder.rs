//! `setters!`: builder methods for the public fields of the configs, so that
//! `ServerConfig::new("demo", "1.0").request_timeout(d).page_size(20)` reads as one
//! expression. Each method sets the field of its name and returns the config; the field's
//! own doc says what it means and its default.

/// `setters!(Type { field: FieldType, … })` adds `pub fn field(self, value: FieldType) ->
/// Self` for each field listed; `setters!(into Type { … })` takes `value: impl
/// Into<FieldType>` instead, for strings and lists of them. (Plain types stay exact so that
/// `.page_size(20)` infers.)
macro_rules! setters {
    ($ty:ty { $($field:ident: $t:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets `", stringify!($field), "` (see the field).")]
                #[must_use]
                pub fn $field(mut self, value: $t) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
    (into $ty:ty { $($field:ident: $t:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets `", stringify!($field), "` (see the field).")]
                #[must_use]
                pub fn $field(mut self, value: impl Into<$t>) -> Self {
                    self.$field = value.into();
                    self
                }
            )*
        }
    };
}

pub(crate) use setters;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::client::ClientConfig;
    use crate::http::server::RouterConfig;
    use crate::server::ServerConfig;
    use crate::stdio::ClientOptions;

    #[test]
    fn each_setter_sets_its_field_and_nothing_else() {
        let server = ServerConfig::new("s", "1")
            .instructions("be brief")
            .page_size(20)
            .request_timeout(Duration::from_secs(5))
            .announce_changes(true);
        assert_eq!(server.instructions.as_deref(), Some("be brief"));
        assert_eq!((server.page_size, server.request_timeout), (20, Duration::from_secs(5)));
        assert!(server.announce_changes);
        assert_eq!(server.max_in_flight, ServerConfig::new("s", "1").max_in_flight);

        let client = ClientConfig::new("c", "1").init_timeout(Duration::from_secs(3));
        assert_eq!(client.init_timeout, Duration::from_secs(3));
        let options: ClientOptions<()> =
            ClientOptions::new("c", "1").with_config(|c| c.max_in_flight(8));
        assert_eq!(options.config.max_in_flight, 8);

        let router = RouterConfig::new([1; 32])
            .json_response(true)
            .path("/rpc")
            .health_path(None)
            .allowed_origins(vec!["https://app.example".to_owned()]);
        assert!(router.json_response && router.health_path.is_none());
        assert_eq!((router.path.as_str(), router.allowed_origins.len()), ("/rpc", 1));
        assert_eq!(router.max_body, RouterConfig::new([1; 32]).max_body);
    }
}
