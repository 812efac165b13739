/// The tour section on file storage.
func fileTour(_ arguments: TourArguments) async {
}
