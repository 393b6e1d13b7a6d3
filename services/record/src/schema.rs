//! OpenAPI schemas of the game-specific JSON: the envelope carries options,
//! moves, views and effects as JSON values, documented here as "one of" the
//! hosted engines' own typed schemas (feature `schema`). They stay in this
//! crate, rather than with the server's document, because this crate's own
//! types name them (a record's options, a verified export's view).

use std::borrow::Cow;

use ludo_engine::Engine;
use utoipa::openapi::schema::{OneOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

/// Named schemas, as `ToSchema::schemas` gathers them.
pub type Schemas = Vec<(String, RefOr<Schema>)>;

fn one_of(description: &str, names: &[Cow<'static, str>]) -> RefOr<Schema> {
    let mut builder = OneOfBuilder::new().description(Some(description));
    for name in names {
        builder = builder.item(Ref::from_schema_name(name.clone()));
    }
    builder.into()
}

/// Adds `T`'s schema and those it refers to.
pub fn collect<T: ToSchema>(schemas: &mut Schemas) {
    schemas.push((T::name().into_owned(), T::schema()));
    T::schemas(schemas);
}

/// One schema of the listed games' own `part` (`Options`, `Move` …) each:
/// the test-only games are documented nowhere (see [`crate::games`]).
macro_rules! any_of_kinds {
    ($(#[doc = $doc:literal])* $name:ident, $label:literal, $part:ident, $([$game:ty, $listed:literal])*) => {
        $(#[doc = $doc])*
        pub struct $name;

        impl $name {
            /// The listed games' schemas of this part: each one's name, and
            /// how to collect it with the schemas it refers to.
            fn parts() -> impl Iterator<Item = (Cow<'static, str>, fn(&mut Schemas))> {
                let parts: Vec<(bool, fn() -> Cow<'static, str>, fn(&mut Schemas))> =
                    vec![$(($listed, <<$game as Engine>::$part as ToSchema>::name, collect::<<$game as Engine>::$part>)),*];
                parts.into_iter().filter(|(listed, _, _)| *listed).map(|(_, name, collect)| (name(), collect))
            }
        }

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                let names: Vec<_> = Self::parts().map(|(name, _)| name).collect();
                one_of(concat!($($doc, " ",)*), &names)
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($label)
            }

            fn schemas(schemas: &mut Schemas) {
                for (_, collect) in Self::parts() {
                    collect(schemas);
                }
            }
        }
    };
}

/// The four unions, from the one list of games.
macro_rules! game_schemas {
    ($($variant:ident => $krate:ident, $name:literal, listed: $listed:literal, $defaults:expr, $bounds:expr;)*) => {
        any_of_kinds!(
            /// Options of a new game, in its kind's shape (see `GET /v1/kinds`).
            GameOptions, "GameOptions", Options, $([$krate::Game, $listed])*
        );
        any_of_kinds!(
            /// A move, in the game kind's shape: exactly what the legal-moves endpoint lists.
            GameMove, "GameMove", Move, $([$krate::Game, $listed])*
        );
        any_of_kinds!(
            /// The game-specific state as the caller may see it, in the game kind's shape.
            GameView, "GameView", View, $([$krate::Game, $listed])*
        );
        any_of_kinds!(
            /// Something a record did (automatic steps included), in the game kind's shape.
            GameEffect, "GameEffect", Effect, $([$krate::Game, $listed])*
        );
    };
}

crate::for_each_game!(game_schemas);
