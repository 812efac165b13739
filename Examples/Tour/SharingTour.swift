/// The tour section on Sharing.
func sharingTour() async {
}
