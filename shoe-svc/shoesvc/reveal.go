package shoesvc

import (
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// FairReveal converts a shoe's reveal (GetShoeReveal, the shoe_closed
// event) for fair.Verify.
func FairReveal(r *shoev1.ShoeReveal) fair.Reveal {
	return fair.Reveal{
		Decks: int(r.GetDecks()), ServerSeed: r.GetServerSeed(), ClientSeed: r.GetClientSeed(), PlayerSeeds: r.GetPlayerSeeds(),
		Commitment: r.GetCommitment(), Order: r.GetOrder(), CutPosition: int(r.GetCutPosition()),
		CutRandom: r.GetCutRandom(), BurnByFirstCard: r.GetBurnMode() == shoev1.BurnMode_BURN_MODE_BY_FIRST_CARD,
		Burned: r.GetBurned(), Dealt: r.GetDealt(), CardsLeft: int(r.GetCardsLeft()),
		MovedToBottom: int(r.GetMovedToBottom()), Burn: int(r.GetBurn()),
	}
}
