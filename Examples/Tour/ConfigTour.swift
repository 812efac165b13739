/// The tour section on remote config.
func configTour(_ arguments: TourArguments) async {
}
