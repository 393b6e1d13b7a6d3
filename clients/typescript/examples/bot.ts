import { LudoClient, isProblem, type Seat } from "@ludotheque/sdk";

/** Plays the seats whose tokens it holds, each turn a legal move drawn by `random`, until the game ends. */
export async function playBot(client: LudoClient, gameId: string, tokens: Map<Seat, string>, random = Math.random) {
  for await (const update of client.follow(gameId)) {
    if (update.status.state !== "in_progress") continue;
    for (const seat of update.status.to_move) {
      const token = tokens.get(seat);
      if (token === undefined) continue; // a server bot's turn, or another player's
      const legal = await client.legalMoves(gameId, { token });
      if (legal.version !== update.event.seq) continue; // the stream is behind: act on a later record
      const move = legal.moves[Math.floor(random() * legal.moves.length)];
      if (move === undefined) continue;
      try {
        await client.submitMove(gameId, move, { token, expectedVersion: legal.version, minimal: true });
      } catch (error) {
        if (!isProblem(error, "version_conflict")) throw error; // someone moved first: the stream brings it
      }
    }
  }
  return client.getGame(gameId);
}
