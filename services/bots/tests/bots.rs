//! Bots see only what their seat sees, and play whole games of every kind
//! at every level.

use ludo_bots::{Bot, Budget, Level, Playable, play_out};
use ludo_engine::{DeckRng, Engine, InfoSet, Seat, Seed, Setup, Status};

/// Small budgets: these tests check behaviour, not strength (that is
/// `ludo simulate`'s job, in a release build).
fn budget() -> Budget {
    Budget { iterations: 60, time: None, playout_depth: Some(6) }
}

fn setup<O: Default>(players: usize, seed: u8) -> Setup<O> {
    Setup { players, options: O::default(), seed: Seed([seed; 32]) }
}

/// Moves `game` on by `moves` moves of seeded random bots.
fn advance<E: Playable>(game: &mut E, players: usize, moves: usize, seed: u64) {
    let mut bots: Vec<Bot> = (0..players).map(|s| Bot::new(Level::Random, budget(), seed + s as u64)).collect();
    play_out(game, &mut bots, moves).expect("random bots play legal moves");
}

/// The honesty check: the real game, and another one dealt
/// afresh from the seat's information (other hidden cards, same public
/// past), give the seat the same info, and every level chooses the same
/// move in both.
/// Answers how many choices were compared and in how many of the other
/// games the hidden parts differed from the real one's.
fn same_choices_whatever_is_hidden<E: Playable>(game: &E) -> (usize, usize) {
    let Some(&seat) = game.status().to_move().first() else { return (0, 0) };
    let info = game.info(seat);
    let (mut checked, mut differed) = (0, 0);
    for other_seed in 1..4u8 {
        let other = E::determinize(&info, &mut DeckRng::new(&Seed([other_seed; 32])));
        assert_eq!(other.info(seat), info, "a determinization keeps what the seat knows");
        differed += usize::from(other != *game);
        for level in Level::ALL {
            let a = Bot::new(level, budget(), 42).choose::<E>(seat, &game.info(seat));
            let b = Bot::new(level, budget(), 42).choose::<E>(seat, &other.info(seat));
            assert_eq!(a, b, "{level}: the same information, the same move");
            assert!(a.is_some(), "{level}: a move when it is the seat's turn");
            checked += 1;
        }
    }
    (checked, differed)
}

#[test]
fn battle13_bots_choose_the_same_whatever_the_other_knights_are() {
    let (mut checked, mut differed) = (0, 0);
    for seed in 0..4u8 {
        let (mut game, _) = ludo_battle13::Game::new(&setup(4, seed)).unwrap();
        // Into the tournaments, where hidden knights decide what is legal for others.
        advance(&mut game, 4, 20 + usize::from(seed) * 5, u64::from(seed));
        let (c, d) = same_choices_whatever_is_hidden(&game);
        (checked, differed) = (checked + c, differed + d);
    }
    assert!(checked >= 18, "{checked} choices compared");
    assert!(differed >= 6, "the other games really hid other knights ({differed})");
}

#[test]
fn kardinal_bots_choose_the_same_whatever_the_other_hands_are() {
    let (mut checked, mut differed) = (0, 0);
    for seed in 0..4u8 {
        let (mut game, _) = ludo_kardinal::Game::new(&setup(3 + usize::from(seed % 3), seed)).unwrap();
        advance(&mut game, 5, 12 + usize::from(seed) * 4, u64::from(seed));
        let (c, d) = same_choices_whatever_is_hidden(&game);
        (checked, differed) = (checked + c, differed + d);
    }
    assert!(checked >= 18, "{checked} choices compared");
    assert!(differed >= 6, "the other games really dealt other hands ({differed})");
}

#[test]
fn cardinal_bots_choose_the_same_from_the_same_game() {
    let (mut game, _) = ludo_cardinal::Game::new(&setup(3, 1)).unwrap();
    advance(&mut game, 3, 6, 1);
    assert_eq!(same_choices_whatever_is_hidden(&game), (9, 0), "nothing is hidden in Cardinal");
}

fn whole_game<E: Playable>(game: &mut E, players: usize, levels: &[Level]) {
    let mut bots: Vec<Bot> = (0..players).map(|s| Bot::new(levels[s % levels.len()], budget(), s as u64)).collect();
    let made = play_out(game, &mut bots, 5_000).expect("every bot move is legal");
    assert!(made > 0);
    assert!(matches!(game.status(), Status::Finished { .. }), "the game ended within 5,000 moves ({made} made)");
}

#[test]
fn every_level_plays_whole_games_of_every_kind() {
    for levels in [[Level::Random, Level::Greedy], [Level::Strong, Level::Random]] {
        let (mut cardinal, _) = ludo_cardinal::Game::new(&setup(2, 3)).unwrap();
        whole_game(&mut cardinal, 2, &levels);
        let (mut kardinal, _) = ludo_kardinal::Game::new(&setup(3, 4)).unwrap();
        whole_game(&mut kardinal, 3, &levels);
    }
    // A Battle 13 match to 20 crowns is long; the greedy and strong bots
    // play one joust's worth of it here, legally.
    let (mut battle, _) = ludo_battle13::Game::new(&setup(4, 5)).unwrap();
    let mut bots: Vec<Bot> = [Level::Strong, Level::Greedy, Level::Strong, Level::Greedy]
        .iter()
        .enumerate()
        .map(|(s, &l)| Bot::new(l, budget(), s as u64))
        .collect();
    assert!(play_out(&mut battle, &mut bots, 80).expect("legal moves") > 0);
}

#[test]
fn levels_parse_by_name_and_refuse_others() {
    for level in Level::ALL {
        assert_eq!(level.name().parse::<Level>(), Ok(level));
    }
    let err = "expert".parse::<Level>().unwrap_err();
    assert_eq!(err.to_string(), "unknown bot level `expert`: expected random, greedy or strong");
}

#[test]
fn a_bot_does_not_move_for_a_seat_whose_turn_it_is_not() {
    let (game, _) = ludo_cardinal::Game::new(&setup(2, 1)).unwrap();
    let to_move = game.status().to_move()[0];
    let other = Seat((to_move.0 + 1) % 2);
    assert_eq!(Bot::new(Level::Strong, budget(), 1).choose::<ludo_cardinal::Game>(other, &game.info(other)), None);
}
