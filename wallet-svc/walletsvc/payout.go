package walletsvc

// The wallet's settlement shapes. Every amount is computed by the rules
// engine (services/rules: SettleChemin, SettlePuntoBanco,
// SettleBanqueCoup, Commission, BanqueAuctionFee, HourlyFeeDue), the one
// home of payouts, commissions and fees; the wallet moves what it computes.

// betResult is what one bet did: the stake lost, or the winnings (stake
// excluded) and the commission on them.
type betResult struct {
	lost, won, commission int64
}
