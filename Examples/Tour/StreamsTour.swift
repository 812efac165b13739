/// The tour section on Streams.
func streamsTour() async {
}
