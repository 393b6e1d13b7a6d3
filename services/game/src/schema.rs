//! OpenAPI schemas of a new game's seats (feature `schema`): a player's
//! name, with the pattern of the server's own rule, or a name and a bot.
//! The unions of the games' own shapes are `ludo_record::schema`'s.

use std::borrow::Cow;

use ludo_record::schema::{Schemas, collect};
use utoipa::openapi::schema::{OneOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

/// A player's name: 1 to 40 visible characters (no control, format,
/// separator or private-use characters), not blank.
pub struct PlayerName;

impl PartialSchema for PlayerName {
    fn schema() -> RefOr<Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .min_length(Some(1))
            .max_length(Some(crate::MAX_NAME_CHARS))
            .pattern(Some(name_pattern()))
            .description(Some(
                "A player's name: 1 to 40 visible characters (no control, format, line or paragraph separator, private-use or unassigned characters), not blank. The pattern names those of the Basic Multilingual Plane but unassigned ones.",
            ))
            .into()
    }
}

/// The pattern of a name, from the server's own rule ([`crate::text::is_visible`]
/// and `str::trim`): no character it refuses, and one at least that is not
/// whitespace. It names the characters of the Basic Multilingual Plane
/// (an ECMA-262 pattern without the `u` flag cannot name others) that
/// Unicode has assigned (which code points are unassigned changes with
/// each Unicode version, so a pattern could not keep up).
fn name_pattern() -> String {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    let mut refused = String::new();
    let mut blank = String::new();
    let mut runs: [Option<(u32, u32)>; 2] = [None, None];
    fn close(run: &mut Option<(u32, u32)>, into: &mut String) {
        if let Some((first, last)) = run.take() {
            into.push_str(&format!("\\u{first:04X}"));
            if last > first {
                into.push_str(&format!("-\\u{last:04X}"));
            }
        }
    }
    // `char::from_u32` skips the surrogates, which no JSON text carries alone.
    for c in (0..=0xFFFF).filter_map(char::from_u32) {
        let class = if c.general_category() == GeneralCategory::Unassigned {
            None
        } else if !crate::text::is_visible(c) {
            Some(0)
        } else if c.is_whitespace() {
            Some(1)
        } else {
            None
        };
        let code = u32::from(c);
        for (i, into) in [&mut refused, &mut blank].into_iter().enumerate() {
            match (&mut runs[i], class == Some(i)) {
                (Some((_, last)), true) if *last + 1 == code => *last = code,
                (run, true) => {
                    close(run, into);
                    *run = Some((code, code));
                }
                (run, false) => close(run, into),
            }
        }
    }
    let [mut refused_run, mut blank_run] = runs;
    close(&mut refused_run, &mut refused);
    close(&mut blank_run, &mut blank);
    format!("^[^{refused}]*[^{refused}{blank}][^{refused}]*$")
}

impl ToSchema for PlayerName {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("PlayerName")
    }
}

/// A seat of a new game: a player's name, or an object with the name and
/// the server bot that plays the seat (`api::Player` reads it).
pub struct PlayerSchema;

impl PartialSchema for PlayerSchema {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .description(Some("A seat of a new game: the name of the person who plays it, or the name and the server bot that plays it."))
            .item(Ref::from_schema_name(PlayerName::name()))
            .item(Ref::from_schema_name(BotPlayer::name()))
            .into()
    }
}

impl ToSchema for PlayerSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("PlayerSeat")
    }

    fn schemas(schemas: &mut Schemas) {
        collect::<PlayerName>(schemas);
        collect::<BotPlayer>(schemas);
    }
}

/// A seat given as an object: its name, and the server bot that plays it
/// (none, or null: a person plays it, as with a name alone).
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // A schema only.
pub struct BotPlayer {
    /// The name shown for the seat.
    #[schema(value_type = PlayerName)]
    name: String,
    /// The bot; absent or null: a person plays the seat.
    bot: Option<ludo_record::bot::BotRequest>,
}
