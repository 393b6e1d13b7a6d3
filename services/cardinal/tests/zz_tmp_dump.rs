use ludo_cardinal::{Effect, Game, Move, Options, Orientation};
use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{Engine, Setup, Status, Viewer};
use serde_json::{json, Value};

fn mv(m: &Move) -> Value {
    match *m {
        Move::Build { shape, colour, x, y, orientation, bonus_colour } => {
            let mut v = json!({"type":"build","shape":shape.name(),"colour":colour.0,"x":x,"y":y});
            if let Some(o) = orientation { v["orientation"] = json!(match o { Orientation::Horizontal => "horizontal", Orientation::Vertical => "vertical" }); }
            if let Some(c) = bonus_colour { v["bonus_colour"] = json!(c.0); }
            v
        }
        Move::MoveCardinal { x, y } => json!({"type":"move_cardinal","x":x,"y":y}),
        Move::KeepCardinal => json!({"type":"keep_cardinal"}),
    }
}

#[test]
#[ignore]
fn dump() {
    let dir = std::path::Path::new("/tmp/cardinal_dump");
    std::fs::create_dir_all(dir).unwrap();
    for players in 2..=4usize {
        for n in 0..300u64 {
            let seed = test_seed(n * 7 + players as u64);
            let setup = Setup { players, options: Options::default(), seed: seed.clone() };
            let p = random_playout::<Game>(&setup, n + 99, 500, |_, _| {});
            let Status::Finished { result } = p.state.status() else { panic!() };
            let passes: Vec<Value> = p.steps.iter().flat_map(|s| &s.effects).filter_map(|e| match e { Effect::ForcedPass { seat } => Some(json!(seat.0)), _ => None }).collect();
            let f = json!({"players": players, "seed": seed.0.iter().map(|b| format!("{b:02x}")).collect::<String>(), "options": {"first_seat": null},
              "moves": p.steps.iter().map(|s| json!({"seat": s.seat.0, "move": mv(&s.mv)})).collect::<Vec<_>>(),
              "expected": {"scores": result.scores, "winners": result.winners.iter().map(|s| s.0).collect::<Vec<_>>(), "buildings": p.state.view(Viewer::Spectator).buildings.len(), "forced_passes": passes}});
            std::fs::write(dir.join(format!("g{players}-{n}.json")), f.to_string()).unwrap();
        }
    }
}
