//! The one declaration of the games this server hosts.
//!
//! [`for_each_game!`](crate::for_each_game) hands the list to a macro of
//! the caller's, which expands whatever it needs per game: this crate's
//! registry ([`crate::kinds`]) and OpenAPI unions (`schema`), the
//! server's proto conversions, the command line's bots. Adding a game is its
//! engine crate, its proto file and converters, its board drawing and rules
//! page, and one line here (docs/adding-a-game.md).
//!
//! Each entry reads `Variant => engine_crate, "Display name", listed: bool,
//! server defaults, bounds on new options;`:
//! - `Variant` names the game in the registry's enums and in the proto
//!   `oneof`s of `ludo.v1` alike;
//! - `engine_crate` is the crate whose `Game` implements the engine
//!   contract (downstream crates reach it as `ludo_record::engines::<crate>`,
//!   so they need no dependency of their own on it);
//! - `listed` says whether `GET /v1/kinds`, `ListKinds` and the OpenAPI
//!   document show the game: `true` for every game of the list below,
//!   `false` for the test-only games, which are hosted (created and played
//!   by kind id) but published nowhere, so the API is the same with or
//!   without them;
//! - the server defaults (`fn() -> serde_json::Map`) fill options a request
//!   leaves out, and the bounds (`fn(&Value) -> Result<(), CreateError>`)
//!   check the options of new games; both are this crate's functions.

/// Calls `$callback! { entry; entry; … }` with every game compiled in, the
/// published games first (see the [module](crate::games) for an entry's
/// parts).
///
/// ```
/// macro_rules! ids {
///     ($($variant:ident => $krate:ident, $name:literal, listed: $listed:literal, $defaults:expr, $bounds:expr;)*) => {
///         [$(<ludo_record::engines::$krate::Game as ludo_engine::Engine>::KIND),*]
///     };
/// }
/// assert_eq!(&ludo_record::for_each_game!(ids)[..3], ["cardinal", "kardinal", "battle13"]);
/// ```
#[macro_export]
macro_rules! for_each_game {
    ($callback:ident) => {
        $crate::__with_test_games! { $callback;
            Cardinal => ludo_cardinal, "Cardinal", serde_json::Map::new, no_bounds;
            Kardinal => ludo_kardinal, "Kardinal & König", kardinal_defaults, kardinal_bounds;
            Battle13 => ludo_battle13, "Battle 13", serde_json::Map::new, no_bounds;
        }
    };
}

/// The games compiled in for tests only (feature `test-game`), after the
/// published ones. The feature is evaluated here, in this crate, so every
/// crate expanding the list sees the same games whatever its own features.
#[cfg(feature = "test-game")]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_test_games {
    ($callback:ident; $($published:tt)*) => {
        $crate::__listed! { $callback; [$($published)*] [
            Nim => ludo_nim, "Nim", serde_json::Map::new, no_bounds;
        ] }
    };
}

/// Without the feature `test-game`: the published games alone.
#[cfg(not(feature = "test-game"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_test_games {
    ($callback:ident; $($published:tt)*) => {
        $crate::__listed! { $callback; [$($published)*] [] }
    };
}

/// Marks each published game `listed: true` and each test game `listed: false`.
#[doc(hidden)]
#[macro_export]
macro_rules! __listed {
    (
        $callback:ident;
        [$($variant:ident => $krate:ident, $name:literal, $defaults:expr, $bounds:expr;)*]
        [$($t_variant:ident => $t_krate:ident, $t_name:literal, $t_defaults:expr, $t_bounds:expr;)*]
    ) => {
        $callback! {
            $($variant => $krate, $name, listed: true, $defaults, $bounds;)*
            $($t_variant => $t_krate, $t_name, listed: false, $t_defaults, $t_bounds;)*
        }
    };
}

/// The engine crates of the hosted games, for the crates that expand the
/// list (`ludo_record::engines::ludo_cardinal::Game` …).
pub mod engines {
    macro_rules! reexport {
        ($($variant:ident => $krate:ident, $name:literal, listed: $listed:literal, $defaults:expr, $bounds:expr;)*) => {
            $(
                #[doc = concat!($name, "'s engine.")]
                pub use $krate;
            )*
        };
    }
    crate::for_each_game!(reexport);
}
