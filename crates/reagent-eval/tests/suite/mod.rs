mod real_model;
mod scripted;
mod shipped;
