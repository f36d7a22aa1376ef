int loop(){int total = 0;for(i = 0; i<10; i = i+1){total = total+i;}// sum
return total;}